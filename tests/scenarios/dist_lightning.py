"""Two ranks under Lightning's own launcher, argv[1] the strategy ("ddp": the script run again per device;
"ddp_spawn": torch.multiprocessing.spawn): trainer.log_dir read in an @rank_zero_only hook ends in a broadcast
that only rank 0 calls (Lightning-AI/pytorch-lightning#18148); rank 1 waits in the barrier that follows."""

import sys

import lightning as L
import torch
from _ready import ready
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
        ready("rank0")
        print(f"logging to {self.trainer.log_dir}", flush=True)  # HANG-HERE


if __name__ == "__main__":
    trainer = L.Trainer(
        accelerator="cpu",
        devices=2,
        strategy=sys.argv[1],
        max_epochs=1,
        num_sanity_val_steps=0,
        enable_checkpointing=False,
        enable_progress_bar=False,
        logger=False,
    )
    trainer.fit(Boring())
