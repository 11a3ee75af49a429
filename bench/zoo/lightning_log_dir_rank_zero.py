"""Reading trainer.log_dir inside an @rank_zero_only hook: the run froze after its first step.

report: https://github.com/Lightning-AI/pytorch-lightning/issues/18148
also: https://github.com/Lightning-AI/pytorch-lightning/issues/16417
saw: reading trainer.log_dir in an @rank_zero_only on_fit_start froze the run.
mechanism: Trainer.log_dir ends with strategy.broadcast(); called on rank 0 only, it waits for a broadcast rank 1 never joins (rank 1 waits in its first backward's all_reduce).
expect: hung distributed.peer_stuck
"""
import tempfile

import lightning as L
import torch
from _zoo import ready
from lightning.pytorch.loggers import CSVLogger
from lightning.pytorch.utilities import rank_zero_only


class Boring(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch, _):
        return self.layer(batch).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        return torch.utils.data.DataLoader(torch.randn(64, 8), batch_size=4)

    @rank_zero_only
    def on_fit_start(self):
        ready()
        print(f"logging to {self.trainer.log_dir}", flush=True)  # HANG-HERE


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, num_sanity_val_steps=0,
                        enable_checkpointing=False, enable_progress_bar=False,
                        logger=CSVLogger(tempfile.mkdtemp(prefix="zoo-lightning-")))
    trainer.fit(Boring())
