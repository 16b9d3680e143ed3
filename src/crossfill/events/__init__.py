"""Status-change fan-out to websocket subscribers: the hub, and the outbox tail that feeds it."""
