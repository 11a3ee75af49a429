"""Healthy: the progress lines real trainers print (tqdm, HF Trainer log dicts, Lightning under pipes,
Keras, PyTorch examples, Megatron, mmengine), one trainer after another, with the silent pauses real runs have
(an evaluation of argv[1] seconds between two of them)."""

import sys
import time

PAUSE = float(sys.argv[1]) if len(sys.argv) > 1 else 25.0
FORMATS = [
    "Epoch 1:  {n}%|##        | {n}/100 [00:0{m}<00:10,  9.8it/s, loss=0.{n}]",
    "{{'loss': '0.{n}', 'grad_norm': '0.79', 'learning_rate': '3.4e-05', 'epoch': '0.{n}'}}",
    "Epoch 0:  {n}%| | {n}/100 [00:01<00:10, 9.81it/s, v_num=0, train_loss=0.{n}]",
    "{n}/100 [==============================] - 0s 2ms/step - loss: 0.{n}",
    "Train Epoch: 1 [{n}00/60000 ({n}%)]\\tLoss: 0.{n}",
    " iteration {n}/ 1000 | consumed samples: {n}00 | elapsed time per iteration (ms): 98.1 | loss: 7.{n} |",
    "11/24 09:00:0{m} - mmengine - INFO - Epoch(train) [1][{n}/100]  lr: 1.0e-04  loss: 0.{n}",
]

if __name__ == "__main__":
    for k, fmt in enumerate(FORMATS):
        for n in range(1, 41):
            print(fmt.format(n=n, m=n % 10), flush=True)
            time.sleep(0.05)
        if k == 2:
            time.sleep(PAUSE)  # a silent evaluation between two trainers' output
    print("done", flush=True)
