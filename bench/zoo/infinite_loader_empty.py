"""An infinite wrapper over a DataLoader that yields nothing: next() spins forever.

report: https://github.com/NVlabs/long-video-gan/issues/4
saw: training waited two days at the same point; the maintainer: "an infinite loop might happen here if the data loader does not return any samples".
mechanism: `while True: for x in loader: yield x` never yields when the loader is empty, so next() re-creates iterators at 100 % CPU forever.
expect: hung code.busy_loop
"""
from _zoo import ready
from torch.utils.data import DataLoader


def infinite(loader):
    while True:  # HANG-HERE
        for batch in loader:
            yield batch


if __name__ == "__main__":
    clips = []  # the filter left no clip of the requested length
    print("building loader", flush=True)
    ready()
    batches = infinite(DataLoader(clips, batch_size=4))
    for step in range(10):
        print(f"step {step} {next(batches)}", flush=True)
