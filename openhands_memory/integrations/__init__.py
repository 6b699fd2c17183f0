"""Bridges to other agent frameworks: each subpackage plugs this library into one (an optional extra each).

Nothing else of ours imports these packages; importing one needs its framework installed.
"""
