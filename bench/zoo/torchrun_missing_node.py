"""torchrun --nnodes=2 started on one node only: the agent waits in rendezvous, no worker starts.

report: https://github.com/pytorch/pytorch/issues/52848
saw: launch with --nnodes=2 hung on every machine (a later comment: usually a wrong world size or node count).
mechanism: torchrun's static rendezvous waits for the second node's agent, which never starts; it spawns no worker and prints nothing.
expect: waiting distributed.rendezvous_wait
"""
import os
import subprocess
import sys

from _zoo import free_port, ready

if __name__ == "__main__":
    port = free_port()
    ready()
    train = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_zoo_train.py")
    sys.exit(subprocess.call([sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node-rank", "0",
                              "--nproc-per-node", "1", "--master-addr", "127.0.0.1", "--master-port", str(port),
                              train]))
