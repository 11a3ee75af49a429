"""The main process spins forever in a retry loop whose exit condition is never met."""

from _ready import ready


def wait_for_tokenizer(state):
    ready()
    tries = 0
    while not state.get("ready"): tries += 1  # HANG-HERE
    return tries


if __name__ == "__main__":
    wait_for_tokenizer({})
