"""Bridges to other agent frameworks; each is an optional extra, and nothing else of this library imports them."""
