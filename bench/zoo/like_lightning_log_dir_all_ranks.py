"""Reading trainer.log_dir on every rank, as the fix for rank-zero-only reads says: slow steps, and it finishes.

report: https://github.com/Lightning-AI/pytorch-lightning/issues/18148
saw: the maintainers' answer: trainer.log_dir broadcasts, so every rank must read it (not inside @rank_zero_only).
mechanism: healthy: both ranks of Lightning's own DDP launcher (rank 0 is the script, rank 1 its copy, neither with RANK in its environment) read log_dir, so the broadcast completes; each step then takes a while.
expect: healthy
"""
import tempfile
import time

import lightning as L
import torch
from _zoo import ready, seconds
from lightning.pytorch.loggers import CSVLogger

STEPS = 16


class Boring(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch, _):
        time.sleep(seconds(40) / STEPS)  # a slow step, in lockstep on both ranks
        return self.layer(batch).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        return torch.utils.data.DataLoader(torch.randn(STEPS * 8, 8), batch_size=4)

    def on_fit_start(self):
        ready()
        print(f"rank {self.global_rank} logging to {self.trainer.log_dir}", flush=True)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, num_sanity_val_steps=0,
                        enable_checkpointing=False, enable_progress_bar=False, log_every_n_steps=1,
                        logger=CSVLogger(tempfile.mkdtemp(prefix="zoo-lightning-")))
    trainer.fit(Boring())
    print("done", flush=True)
