"""A fast tokenizer in collate_fn of a forked DataLoader, after the parent used it.

report: https://github.com/huggingface/tokenizers/issues/258
also: https://github.com/allenai/allennlp/issues/4330
saw: the tokenizer stalls when used in a DataLoader once train()/encode() ran in the parent.
mechanism: as tokenizers#187: DataLoader resets torch's threads in its workers, not rayon's; the inherited pool has no threads.
expect: hung fork.inherited_lock
accept: dataloader.worker_stuck
"""
import os

os.environ["TOKENIZERS_PARALLELISM"] = "true"

from _zoo import ready
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from torch.utils.data import DataLoader

tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.Whitespace()
tok.train_from_iterator(["hello world foo bar baz"] * 1000, trainers.BpeTrainer(vocab_size=100))
texts = ["hello world foo bar"] * 4096


def collate(batch):
    ready()
    return [e.ids for e in tok.encode_batch(batch)]  # HANG-HERE


if __name__ == "__main__":
    tok.encode_batch(texts)
    for step, batch in enumerate(DataLoader(texts, batch_size=2048, num_workers=2, collate_fn=collate)):
        print(f"step {step}", flush=True)
