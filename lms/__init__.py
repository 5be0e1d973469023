"""LTI 1.3: launches from an LMS, deep links, grades back, rosters in (docs/lti.md)."""
