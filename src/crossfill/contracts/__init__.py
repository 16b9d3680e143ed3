"""Our Solidity contracts, their build, and loading of the compiled artifacts."""

from crossfill.contracts.artifacts import Artifact, load_artifact

__all__ = ["Artifact", "load_artifact"]
