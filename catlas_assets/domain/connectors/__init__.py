"""Connectors: one module per source shape (vendor API, feed, sitemap, generic HTML).

Each connector knows the request(s) its source needs (pagination included) and parses the
vendor's real response shape into an `Extraction`. A response that does not match the
vendor's shape raises `SchemaError` (failure class SCHEMA), never an empty board.
"""
