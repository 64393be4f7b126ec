"""The remote engine cache: saved engines shared by many machines through S3-compatible storage.

``config`` reads the settings (``TENSORACLE_REMOTE`` and friends), ``objects`` is the client of
the bucket (obstore, with bounded timeouts and retries, signing with the credentials botocore
finds: ``s3_client``), ``lease`` coordinates the builders of a fleet, ``fleet`` plugs all of it
into the open protocol (``tensoracle.cache.protocol``).
Importing this package does not import obstore or botocore: that happens only when a remote
cache is configured.
"""
