"""Date and time fields of a form, shown and read in the instructor's zone.

Every `datetime-local` input of every form goes through this module, so
that what an input shows is read back in the zone it was shown in, and an
unchanged save stores exactly what was stored. A new form with a date needs
the two halves, nothing else (static/js/localtime.js already does its part).

The template: one `{% zone_input %}` per form (the hidden `tz`) and one
`{% zoned_datetime %}` per field (its label, "Closes (Europe/Paris)", and
its input; the markup is teaching/instructor/_zoned_datetime.html)::

    {% load zoned_time %}
    <form method="post">{% csrf_token %}
      {% zone_input values=values %}
      <p>{% zoned_datetime "closes_at" "Closes" values=values required=True %}</p>
    </form>

(`id=` sets the input's id, the field's name by default; `stacked=True`
puts a line break between label and input.) `values` is what the form
shows, or nothing for a blank form:

- on a first render, a dict of the stored (aware) datetimes, with no
  `tz`: the inputs show UTC and carry it in `data-utc`, the labels say
  "(UTC)" and `tz` is UTC. localtime.js moves each value into the
  browser's zone and puts that zone's name in the labels and in `tz`.
  Without JavaScript everything stays UTC, and is read back as UTC;
- on a re-render after an error (a 400), the posted QueryDict: the values
  come back as typed, in the posted `tz`, which the labels name and the
  `tz` input keeps; nothing carries `data-utc`, so the script leaves them
  alone (no second conversion).

The view: `form_time(request.POST, name, stored=...)` is the one way to
read such a field: an aware UTC datetime, or FormTimeError (a ValueError
whose `field` names the input; wrap it in the app's own error). `stored` is
the value the form was opened with: an unchanged minute keeps it exactly,
seconds included (the inputs show minutes)::

    values = {"closes_at": row.closes_at}
    if request.method == "POST":
        values = request.POST  # a refusal shows what was typed
        try:
            closes_at = form_time(values, "closes_at", stored=row.closes_at)
        except FormTimeError as exc:
            return render(request, page, {"values": values, ...}, status=400)

The rules at the edges of a zone's daylight-saving changes:

- a local time the clocks skip (the spring-forward gap) is refused with a
  message naming the field, never moved silently;
- a local time that happens twice (the fall-back hour) is the first of the
  two, the earlier instant; an unchanged stored value keeps its own.

A `tz` that is no zone (empty, unknown, malformed) reads as UTC, as the
form says without JavaScript.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django import template
from django.utils.html import format_html

register = template.Library()

FORM_TIME = "%Y-%m-%dT%H:%M"  # what a datetime-local input posts
_WITH_SECONDS = "%Y-%m-%dT%H:%M:%S"  # what it may post with a `step`
_LONGEST_ZONE = 64  # IANA names are at most about 30 characters


class FormTimeError(ValueError):
    """A date and time field that cannot be read; `field` names it."""

    def __init__(self, message: str, *, field: str):
        super().__init__(message)
        self.field = field


def form_zone(name) -> tuple[tzinfo, str]:
    """The zone a form's `tz` names and its name; UTC if it names none."""
    name = name if isinstance(name, str) else ""
    if name and len(name) <= _LONGEST_ZONE and name != "UTC":
        try:
            return ZoneInfo(name), name
        # A directory ("America") or an over-long name is an OSError.
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    return UTC, "UTC"


def _label(field: str) -> str:
    """ "opens_at" -> "Opens": how a message names the field."""
    return field.removesuffix("_at").replace("_", " ").capitalize()


def _naive(text: str) -> datetime | None:
    for shape in (FORM_TIME, _WITH_SECONDS):
        try:
            return datetime.strptime(text, shape)
        except ValueError:
            continue
    return None


def form_time(
    post,
    field: str,
    *,
    stored: datetime | None = None,
    required: bool = True,
    label: str | None = None,
) -> datetime | None:
    """The posted `field`, read in the form's `tz`, as an aware UTC datetime.

    `post` is the QueryDict (or any mapping with `get`). An empty field is
    None, or FormTimeError if `required`. If the posted time is the minute
    `stored` shows in that zone, `stored` itself comes back (seconds and
    all). `label` names the field in messages ("Opens" for "opens_at").
    """
    label = label or _label(field)
    text = (post.get(field) or "").strip()
    if not text:
        if required:
            raise FormTimeError(f"{label}: give a date and time.", field=field)
        return None
    zone, zone_name = form_zone(post.get("tz"))
    naive = _naive(text)
    if naive is None:
        raise FormTimeError(
            f"{label}: give a date and time (YYYY-MM-DDTHH:MM).", field=field
        )
    try:
        if stored is not None:
            shown = stored.astimezone(zone).replace(tzinfo=None, microsecond=0)
            if naive.second == 0:
                shown = shown.replace(second=0)
            if shown == naive:  # naive comparison: a fall-back fold matches too
                return stored
        # fold=0: in the fall-back hour, the first of the two instants.
        moment = naive.replace(tzinfo=zone, fold=0).astimezone(UTC)
        skipped = moment.astimezone(zone).replace(tzinfo=None) != naive
    except OverflowError:  # year 1 east of UTC, year 9999 west of it
        raise FormTimeError(
            f"{label}: give a date and time between the years 2 and 9998.",
            field=field,
        ) from None
    if skipped:
        raise FormTimeError(
            f"{label}: {naive:%Y-%m-%d %H:%M} does not exist in {zone_name} "
            "(the clocks skip that hour); give another time.",
            field=field,
        )
    return moment


def _values_get(values, key):
    """values[key] for a dict or a QueryDict; None for no values."""
    getter = getattr(values, "get", None)
    return getter(key) if getter is not None else None


def _posted_zone(values) -> tuple[tzinfo, str] | None:
    """The zone a posted form was read in; None for a first render."""
    name = _values_get(values, "tz")
    return form_zone(name) if name else None


@register.simple_tag
def zone_input(values=None):
    """The form's hidden `tz`: UTC, which localtime.js replaces with the
    browser's zone (`data-browser-zone`), or the zone the form was posted
    in, kept as it is."""
    posted = _posted_zone(values)
    if posted is None:
        return format_html(
            '<input type="hidden" name="tz" value="{}" data-browser-zone>', "UTC"
        )
    return format_html('<input type="hidden" name="tz" value="{}">', posted[1])


@register.inclusion_tag("teaching/instructor/_zoned_datetime.html")
def zoned_datetime(
    name: str,
    label: str,
    values=None,
    id: str = "",  # noqa: A002 (the HTML attribute)
    required: bool = False,
    stacked: bool = False,
) -> dict:
    """`<label>Label (zone)</label> <input type=datetime-local ...>` for
    `values[name]` (see the module's docstring); `stacked` puts a line
    break between label and input."""
    value = _values_get(values, name)
    posted = _posted_zone(values)
    field = {
        "name": name,
        "label": label,
        "id": id or name,
        "required": required,
        "stacked": stacked,
    }
    if posted is not None:  # as typed, in the zone it was typed in
        zone, zone_name = posted
        if isinstance(value, datetime):
            value = value.astimezone(zone).strftime(FORM_TIME)
        return {**field, "zone": zone_name, "value": value or ""}
    if isinstance(value, str):  # posted without a zone: it was read as UTC
        value = _naive(value.strip()) or value
        if isinstance(value, datetime):
            value = value.replace(tzinfo=UTC)
    utc = ""
    if isinstance(value, datetime):
        moment = value.astimezone(UTC)
        value, utc = moment.strftime(FORM_TIME), moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {**field, "browser": True, "value": value or "", "utc": utc}
