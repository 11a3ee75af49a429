"""A real native hang: the parent runs a parallel matmul (GNU OpenMP starts its thread pool), then
forks; the child's first parallel op waits forever for pool threads that fork did not copy."""

import os
import time

import torch
from _ready import ready

torch.set_num_threads(2)
x = torch.randn(512, 512)
for _ in range(3):
    (x @ x).sum()
child = os.fork()
if child == 0:
    ready()
    (x @ x).sum()  # HANG-HERE
    os._exit(0)
while True:
    time.sleep(0.2)
    if os.waitpid(child, os.WNOHANG)[0]:
        break
