"""A job that asks for a token on standard input (like a W&B or HF login prompt), then trains."""

import time

print("wandb: You can find your API key in your browser here: https://wandb.ai/authorize", flush=True)
key = input("wandb: Paste an API key from your profile and hit enter: ")  # HANG-HERE
print(f"logged in ({len(key.strip())} characters)", flush=True)
for step in range(20):
    time.sleep(0.1)
    print(f"step {step}", flush=True)
