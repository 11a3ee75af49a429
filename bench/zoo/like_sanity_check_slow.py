"""Lightning's validation sanity check takes minutes before the first training step.

report: https://github.com/CompVis/taming-transformers/issues/92
saw: "It always takes several minutes to process a Validation sanity check."
mechanism: healthy: each sanity validation step computes for a long time before training starts, printing nothing.
expect: healthy
"""
import time

import lightning as L
import torch
from _zoo import ready, seconds


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch, _):
        return self.layer(batch).sum()

    def validation_step(self, batch, _):
        ready()
        end, x = time.time() + seconds(24) / 2, torch.randn(256, 256)
        while time.time() < end:  # an expensive metric (FID, a beam search)
            x = torch.tanh(x @ x)
        return self.layer(batch).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        return torch.utils.data.DataLoader(torch.randn(32, 8), batch_size=4)

    def val_dataloader(self):
        return torch.utils.data.DataLoader(torch.randn(8, 8), batch_size=4)


if __name__ == "__main__":
    L.Trainer(accelerator="cpu", devices=1, max_steps=5, num_sanity_val_steps=2, enable_progress_bar=False,
              enable_checkpointing=False, logger=False).fit(Model())
