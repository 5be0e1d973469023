"""Register an LMS (an LTI 1.3 platform) and its deployment ids, from a script.

The admin site does the same (LTI registrations, with deployments inline);
this is for provisioning: `manage.py lti_register --name Canvas --issuer
https://canvas.instructure.com --client-id 10000000000001 --login-url ...
--token-url ... --jwks-url ... --deployment 1:abc`. Running it again updates
the registration and adds deployments; it prints what to paste into the LMS.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from lms.registration import RegistrationError, platform_register, tool_urls


class Command(BaseCommand):
    help = "Register an LTI 1.3 platform (issuer, client id, URLs, deployment ids)."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument("--issuer", required=True)
        parser.add_argument("--client-id", required=True)
        parser.add_argument(
            "--login-url", required=True, help="The platform's OIDC auth URL"
        )
        parser.add_argument("--token-url", required=True)
        parser.add_argument("--jwks-url", required=True)
        parser.add_argument(
            "--audience", default="", help="Token audience, if not the token URL"
        )
        parser.add_argument(
            "--deployment", action="append", default=[], dest="deployments"
        )
        parser.add_argument(
            "--base-url",
            default="http://127.0.0.1:8000",
            help="This site's public URL, for the URLs printed",
        )

    def handle(self, *args, **options):
        try:
            registration, added = platform_register(
                name=options["name"],
                issuer=options["issuer"],
                client_id=options["client_id"],
                auth_url=options["login_url"],
                token_url=options["token_url"],
                keyset_url=options["jwks_url"],
                audience=options["audience"],
                deployment_ids=options["deployments"],
            )
        except (RegistrationError, ValidationError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Registered {registration.name}: {registration.issuer} "
            f"(client id {registration.client_id}); "
            f"deployments added: {', '.join(added) or 'none'}."
        )
        for label, url in tool_urls(options["base_url"]).items():
            self.stdout.write(f"  {label}: {url}")
