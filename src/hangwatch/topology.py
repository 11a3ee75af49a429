"""Where this node sits in a multi-node job, read from the launcher's own arguments.

torchrun / python -m torch.distributed.run: --nnodes, --node-rank, --master-addr, --master-port,
--rdzv-endpoint (both - and _ spellings), or the ``PET_*`` variables torchrun itself reads in their
place (Kubeflow's PyTorchJob sets PET_NNODES, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT); else
NNODES/NODE_RANK/MASTER_ADDR/MASTER_PORT, Slurm's SLURM_NNODES/SLURM_NODEID, or a Kubernetes Indexed
Job's JOB_COMPLETION_INDEX in the environment.
"""

from __future__ import annotations

from collections.abc import Mapping

from hangwatch.launcher import launcher_args, launcher_option
from hangwatch.records.values import frozen

DEFAULT_MASTER_PORT = 29500
DEFAULT_RDZV_PORT = 29400
COORD_PORT_OFFSET = 1  # hangwatch's store listens next to the job's own master/rendezvous port


@frozen
class Topology:
    """A multi-node job: this node's rank, the node count, where the coordination store is."""

    nnodes: int
    node_rank: int
    host: str  # where node 0's hangwatch hosts the coordination store
    port: int
    token: str = ""  # the secret every node's hangwatch shares: messages are signed with it
    token_source: str = ""  # where it came from (docs/distributed.md: what listens where)

    @property
    def endpoint(self) -> str:
        """``host:port`` of the store."""
        return f"{self.host}:{self.port}"


def torchrun_option(args: list[str] | None, env: Mapping[str, str], *names: str) -> str | None:
    """A torchrun option from its arguments, else from the ``PET_<NAME>`` variable torchrun reads as its
    default (only when the command is torchrun: another program does not read them)."""
    if args is None:
        return None
    given = launcher_option(args, *names)
    if given is not None:
        return given
    pet = "PET_" + names[0].lstrip("-").replace("-", "_").upper()
    return env.get(pet) or None


def _int(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def coord_token(argv: list[str], env: Mapping[str, str], given: str | None) -> tuple[str, str]:
    """(token, where from): --coord-token, else $HANGWATCH_COORD_TOKEN, else a value every node
    already shares: Slurm's job id, torchrun's --rdzv-id, or the launcher command line with this
    node's own rank taken out (with the master address and port in it)."""
    if given:
        return given, "--coord-token"
    if env.get("HANGWATCH_COORD_TOKEN"):
        return env["HANGWATCH_COORD_TOKEN"], "HANGWATCH_COORD_TOKEN"
    if env.get("SLURM_JOB_ID"):
        return f"slurm:{env['SLURM_JOB_ID']}", "SLURM_JOB_ID"
    rdzv_id = torchrun_option(launcher_args(argv), env, "--rdzv-id", "--rdzv_id")
    if rdzv_id and rdzv_id != "none":
        return f"rdzv:{rdzv_id}", "torchrun --rdzv-id"
    shared, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ("--node-rank", "--node_rank"):
            skip = True
            continue
        if a.startswith(("--node-rank=", "--node_rank=")):
            continue
        shared.append(a)
    return "argv:" + "\0".join(shared), "the launcher command line (without --node-rank)"


def detect(
    argv: list[str],
    env: Mapping[str, str],
    override_endpoint: str | None = None,
    override_node: int | None = None,
    override_nnodes: int | None = None,
    token: str | None = None,
) -> Topology | None:
    """The job's topology if it spans more than one node, else None."""
    args = launcher_args(argv)
    nn_raw = torchrun_option(args, env, "--nnodes") or env.get("NNODES") or env.get("SLURM_NNODES")
    nnodes = override_nnodes or _int((nn_raw or "1").split(":")[-1]) or 1
    if nnodes <= 1:
        return None
    node = (
        override_node
        if override_node is not None
        else _int(
            torchrun_option(args, env, "--node-rank", "--node_rank")
            or env.get("NODE_RANK")
            or env.get("GROUP_RANK")
            or env.get("SLURM_NODEID")
            or env.get("JOB_COMPLETION_INDEX")
        )
    )
    if node is None:
        return None
    secret, source = coord_token(argv, env, token)
    if override_endpoint:
        host, _, port = override_endpoint.rpartition(":")
        return Topology(nnodes, node, host or "127.0.0.1", int(port), secret, source)
    rdzv = torchrun_option(args, env, "--rdzv-endpoint", "--rdzv_endpoint")
    if rdzv:
        host, _, port = rdzv.partition(":")
        base = _int(port) or DEFAULT_RDZV_PORT
    else:
        host = torchrun_option(args, env, "--master-addr", "--master_addr") or env.get("MASTER_ADDR") or "127.0.0.1"
        master_port = torchrun_option(args, env, "--master-port", "--master_port") or env.get("MASTER_PORT")
        base = _int(master_port) or DEFAULT_MASTER_PORT
    return Topology(nnodes, node, host, base + COORD_PORT_OFFSET, secret, source)
