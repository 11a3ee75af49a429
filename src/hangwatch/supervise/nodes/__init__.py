"""A multi-node job: where this node sits (topology), the store the nodes' hangwatches share, the typed
protocol over it (liveness, capture requests, one decision per attempt) and the loop's round. Imported only
for a multi-node job. Never touches another node's processes: a node follows a decision, it is not ended."""
