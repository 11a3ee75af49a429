"""A real transformers Trainer job on CPU: a tiny model defined here (nothing downloaded), tqdm bar
and log dicts every few steps; optionally a hang in the data collator at a given step."""

import argparse
import threading

import torch
from transformers import Trainer, TrainingArguments

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=40)
ap.add_argument("--hang-at", type=int, default=-1)
ap.add_argument("--out", required=True)
ap.add_argument("--save-every", type=int, default=0)
ap.add_argument("--resume", action="store_true")
ap.add_argument("--workers", type=int, default=0)
ap.add_argument("--poison", type=int, default=-1, help="this item waits forever, every time it is read")
args = ap.parse_args()


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def forward(self, x, labels=None):
        out = self.net(x)
        return {"loss": torch.nn.functional.mse_loss(out, labels), "logits": out}


class Items(torch.utils.data.Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        if index == args.poison:
            threading.Event().wait()  # HANG-HERE:poison
        return self.items[index]


calls = {"n": 0}


def collate(items):
    calls["n"] += 1
    if calls["n"] == args.hang_at:
        threading.Event().wait()  # HANG-HERE
    return {"x": torch.stack([i["x"] for i in items]), "labels": torch.stack([i["labels"] for i in items])}


if __name__ == "__main__":
    torch.set_num_threads(1)
    data = [{"x": torch.randn(8), "labels": torch.randn(1)} for _ in range(256)]
    targs = TrainingArguments(output_dir=args.out, max_steps=args.steps, per_device_train_batch_size=4,
                              logging_steps=5, report_to=[], use_cpu=True,
                              save_strategy="steps" if args.save_every else "no", save_steps=args.save_every or 500,
                              dataloader_num_workers=args.workers, disable_tqdm=False)
    Trainer(model=Tiny(), args=targs, train_dataset=Items(data), data_collator=collate).train(
        resume_from_checkpoint=True if args.resume else None)
    print("done", flush=True)
