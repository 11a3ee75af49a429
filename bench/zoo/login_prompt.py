"""A tracker's login prompt on a terminal nobody watches: training never starts.

report: https://github.com/wandb/wandb/issues/592
also: https://github.com/kohya-ss/sd-scripts/pull/435
saw: distributed workers "hanging at the following prompt ... (3) Don't visualize my results"; "training had not yet started because there was an input function asking the user to input the API key".
mechanism: with no API key the library prompts and blocks reading the terminal, where nobody types.
expect: hung process.waits_for_input
stdin: tty
"""
from _zoo import ready

if __name__ == "__main__":
    print("wandb: (1) Create a W&B account\nwandb: (2) Use an existing W&B account\n"
          "wandb: (3) Don't visualize my results", flush=True)
    ready()
    choice = input("wandb: Enter your choice: ")  # HANG-HERE
