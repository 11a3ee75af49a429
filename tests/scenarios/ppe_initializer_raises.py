"""A ProcessPoolExecutor whose initializer raises: each worker prints "Exception in initializer:" and its traceback,
then the executor breaks and map() raises BrokenProcessPool in the main process, which ends with status 1. The cause
is the initializer's error, at its line; BrokenProcessPool is its consequence."""

from concurrent.futures import ProcessPoolExecutor


def load_vocab(cfg: dict) -> None:
    # a dict has no attribute vocab_path: the same error in every worker
    return cfg.vocab_path  # RAISES-HERE


def tokenize(x: int) -> int:
    return x


if __name__ == "__main__":
    with ProcessPoolExecutor(2, initializer=load_vocab, initargs=({},)) as ex:
        print(list(ex.map(tokenize, range(4))), flush=True)
