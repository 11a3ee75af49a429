"""A fast tokenizer used in the parent, then in a forked child, with TOKENIZERS_PARALLELISM=true.

report: https://github.com/huggingface/tokenizers/issues/187
also: https://github.com/NVIDIA-NeMo/Megatron-Bridge/issues/5328
saw: encode_batch hung in DataLoader workers once the parent had used the tokenizer.
mechanism: the child inherits the rayon thread pool's state without its threads; tokenizers' at-fork guard that turns parallelism off does nothing when TOKENIZERS_PARALLELISM is set explicitly (Megatron-Bridge set it to True at import).
expect: hung fork.inherited_lock
"""
import multiprocessing as mp
import os

os.environ["TOKENIZERS_PARALLELISM"] = "true"  # as Megatron-Bridge set it at import

from _zoo import ready
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.Whitespace()
tok.train_from_iterator(["hello world foo bar baz"] * 1000, trainers.BpeTrainer(vocab_size=100))
texts = ["hello world foo bar"] * 20000


def tokenize():
    ready()
    tok.encode_batch(texts)  # HANG-HERE


if __name__ == "__main__":
    tok.encode_batch(texts)
    print("parent tokenized; forking", flush=True)
    p = mp.get_context("fork").Process(target=tokenize)
    p.start()
    p.join()
