"""Moving the solver's inventory between chains: the bridge port a rebalancer asks
(`treasury.bridge`) and its adapters (`treasury.intents_api_bridge`)."""
