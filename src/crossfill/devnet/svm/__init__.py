"""The devnet SVM chain: LiteSVM behind a Solana-compatible JSON-RPC and websocket."""
