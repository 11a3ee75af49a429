"""A real Lightning 2.x job: tiny model, a DataLoader with workers whose items sleep (healthy, but
every stack sample finds a worker in the same line), optionally a worker that hangs in a given
epoch. Lightning picks its rich progress bar (rich is installed): nothing is printed under pipes.
--ckpt-dir: a ModelCheckpoint every 5 steps; --ckpt-path: resume from it (trainer.fit(ckpt_path=));
--hang-step K: the first attempt (HANGWATCH_ATTEMPT=1) hangs in training_step at global step K; --poison I: item I
waits forever whenever it is read (a poisoned file)."""

import argparse
import os
import threading
import time

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset

ap = argparse.ArgumentParser()
ap.add_argument("--epochs", type=int, default=2)
ap.add_argument("--items", type=int, default=64)
ap.add_argument("--sleep-ms", type=float, default=50.0)
ap.add_argument("--hang-epoch", type=int, default=-1)
ap.add_argument("--workers", type=int, default=2)
ap.add_argument("--ckpt-dir", default="")
ap.add_argument("--ckpt-path", default=None)
ap.add_argument("--hang-step", type=int, default=-1)
ap.add_argument("--poison", type=int, default=-1, help="this item waits forever, every time it is read")
args = ap.parse_args()


class Items(Dataset):
    def __init__(self) -> None:
        self.epoch_file = os.environ.get("HW_EPOCH_FILE", "")

    def __len__(self) -> int:
        return args.items

    def __getitem__(self, i: int):
        time.sleep(args.sleep_ms / 1000)
        if i == args.poison:
            threading.Event().wait()  # HANG-HERE:poison
        if args.hang_epoch >= 0 and i == 0 and _epoch() == args.hang_epoch and \
                os.environ.get("HANGWATCH_ATTEMPT", "1") == "1":  # a restart gets past it
            threading.Event().wait()  # HANG-HERE
        return torch.randn(8), torch.randn(1)


def _epoch() -> int:
    try:
        with open(os.environ["HW_EPOCH_FILE"]) as f:
            return int(f.read() or 0)
    except (KeyError, OSError, ValueError):
        return 0


class Model(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        if self.global_step == args.hang_step and os.environ.get("HANGWATCH_ATTEMPT", "1") == "1":
            threading.Event().wait()  # HANG-HERE:step
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("loss", loss, prog_bar=True)
        return loss

    def on_train_epoch_start(self) -> None:
        path = os.environ.get("HW_EPOCH_FILE")
        if path:
            with open(path, "w") as f:
                f.write(str(self.current_epoch))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    torch.set_num_threads(1)
    loader = DataLoader(Items(), batch_size=4, num_workers=args.workers, persistent_workers=False)
    callbacks = []
    if args.ckpt_dir:
        callbacks.append(L.pytorch.callbacks.ModelCheckpoint(dirpath=args.ckpt_dir, every_n_train_steps=5,
                                                             save_top_k=-1, filename="{step}"))
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="cpu", devices=1, logger=False,
                        enable_checkpointing=bool(args.ckpt_dir), enable_model_summary=False, callbacks=callbacks)
    trainer.fit(Model(), loader, ckpt_path=args.ckpt_path)
    if args.ckpt_path:
        print(f"resumed from {os.path.basename(args.ckpt_path)}", flush=True)
    print("done", flush=True)
