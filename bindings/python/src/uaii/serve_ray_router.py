"""A Ray Serve request router that keeps a conversation on one replica.

Each uaii replica keeps the KV cache of the conversation it served last (Model's OpenAI calls
run on one session, which reuses the longest common prefix of the next request). A client
that sends the same `x-session-id` header on every turn of a conversation (Ray Serve's proxy
reads that header into the request's session id) is routed here to the same replica, so the
next turn only prefills its new tokens. Requests without the header are routed by Serve's
usual power of two choices.

The replica for a session is chosen by rendezvous hashing over the live replicas: every
proxy (one per node) picks the same one without sharing state, and when a replica goes away
only its sessions move. The other replicas follow in rank order, so a session whose replica
is at max_ongoing_requests spills over to its next choice instead of waiting.
"""
from __future__ import annotations

import hashlib
import random
from typing import List, Optional

from ray.serve.request_router import (FIFOMixin, LocalityMixin, PendingRequest, RequestRouter,
                                      RunningReplica)


def _score(session_id: str, replica_id: str) -> int:
    # A stable hash (Python's hash() differs between processes, and proxies must agree).
    digest = hashlib.blake2b(f"{session_id}\0{replica_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def rank_for_session(session_id: str, replica_ids: List[str]) -> List[str]:
    """The replicas in the order a session prefers them (highest rendezvous score first)."""
    return sorted(replica_ids, key=lambda r: _score(session_id, r), reverse=True)


class SessionAffinityRouter(FIFOMixin, LocalityMixin, RequestRouter):
    """Routes requests with a session id to their session's replica (see the module doc)."""

    async def choose_replicas(self, candidate_replicas: List[RunningReplica],
                              pending_request: Optional[PendingRequest] = None) -> List[List[RunningReplica]]:
        session_id = pending_request.metadata.session_id if pending_request is not None else ""
        if session_id:
            by_id = {r.replica_id.unique_id: r for r in candidate_replicas}
            return [[by_id[i]] for i in rank_for_session(session_id, list(by_id))]
        # No session: power of two choices among the replicas local routing prefers.
        preferred = self.apply_locality_routing(pending_request=pending_request)
        pool = [r for r in candidate_replicas if r.replica_id in preferred]
        return [random.sample(pool, min(2, len(pool)))] if pool else []
