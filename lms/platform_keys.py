"""A platform's signing keys: cached, and refetched once when it rotates.

pylti1p3 caches a platform's JWKS (5 minutes here) and refuses a launch
whose `kid` is not in the cached set, so for up to 5 minutes after a
platform adds a key, every launch signed with it fails. A launch with an
unknown kid therefore fetches the set again, once, and at most once every
LMS_JWKS_REFETCH_SECONDS per keyset URL: a stream of forged kids cannot make
the tool hammer the platform.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache
from pylti1p3.contrib.django import DjangoMessageLaunch
from pylti1p3.exception import LtiException

JWKS_CACHE_SECONDS = 300
UNKNOWN_KEY = "Unable to find public key"


def refetch_allowed(key_set_url: str) -> bool:
    """True for the first caller in each interval, per keyset URL (atomic)."""
    digest = hashlib.sha256(key_set_url.encode()).hexdigest()[:32]
    return cache.add(
        f"lms-jwks-refetch-{digest}", True, settings.LMS_JWKS_REFETCH_SECONDS
    )


class _Fresh:
    """The key cache, but every read misses: the set comes from the platform
    and is stored again for the launches after this one."""

    def __init__(self, storage):
        self._storage = storage

    def get_value(self, key):
        return None

    def __getattr__(self, name):
        return getattr(self._storage, name)


class KeyRefetchingLaunch(DjangoMessageLaunch):
    """A message launch that refetches the platform's JWKS on an unknown kid."""

    def get_public_key(self):
        try:
            return super().get_public_key()
        except LtiException as exc:
            url = self._registration.get_key_set_url() if self._registration else None
            if UNKNOWN_KEY not in str(exc) or not url or not refetch_allowed(url):
                raise
        cached = self._public_key_cache_data_storage
        self._registration.set_key_set(None)
        self.set_public_key_caching(_Fresh(cached), JWKS_CACHE_SECONDS)
        try:
            return super().get_public_key()
        finally:
            self.set_public_key_caching(cached, JWKS_CACHE_SECONDS)
