from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from teaching.demo_accounts import DEMO_ACCOUNTS, demo_accounts_create


class Command(BaseCommand):
    help = "Create the demo learner, instructor and admin (DEBUG only)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError("demo accounts are for local development: set DEBUG=1")
        demo_accounts_create()
        self.stdout.write("Demo accounts (development only):")
        for username, password, role in DEMO_ACCOUNTS:
            self.stdout.write(
                f"  {role:<10} username={username:<11} password={password}"
            )
