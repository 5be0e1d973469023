"""The teaching API, laid out as every app's API is: views, serializers and
urls (included at /api/v1/ from config/urls.py)."""
