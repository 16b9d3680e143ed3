"""The local devnet: anvil chains, our contracts and Uniswap V2 deployed and seeded."""
