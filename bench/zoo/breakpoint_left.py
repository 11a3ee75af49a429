"""A breakpoint() left in the training loop: under a launcher the prompt is invisible, the job waits.

report: https://github.com/ray-project/ray/issues/18188
also: https://github.com/RLinf/RLinf/issues/383
saw: pdb.set_trace() in training "appears to hang - it doesn't print the debugger prompt".
mechanism: pdb blocks reading commands from its standard input, a terminal where nobody types.
expect: hung process.waits_for_input
stdin: tty
"""
from _zoo import ready

if __name__ == "__main__":
    loss = 1.0
    for step in range(10):  # HANG-HERE (pdb stops at the next line to run: the loop's header)
        loss *= 0.9
        print(f"step {step} loss {loss:.3f}", flush=True)
        if step == 3:
            ready()
            breakpoint()  # HANG-HERE
