"""``--toggles ID=VALUE``: this run's values, above every saved one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from vis_core.settings.owners import SettingOwner
from vis_core.settings.values import parse_text


class Toggles:
    """The ``--toggles`` of this run: each value's text by setting id, and the items that
    are not ``ID=VALUE``. Any of them Vis cannot use stops every turn."""

    def __init__(self, items: Iterable[str]) -> None:
        self.texts: dict[str, str] = {}
        self.malformed: list[str] = []
        for item in items:
            sid, sep, text = item.partition("=")
            if not sep or not sid.strip():
                self.malformed.append(
                    f"--toggles {item!r} is not ID=VALUE, such as report_details=true"
                )
                continue
            self.texts[sid.strip()] = text

    def problems(self, owners: Mapping[str, SettingOwner]) -> list[str]:
        """What is wrong with them: malformed, unknown ids, secrets, bad values."""
        found = list(self.malformed)
        for setting_id in self.texts:
            problem = self.problem(setting_id, owners)
            if problem is not None:
                found.append(problem)
        return found

    def problem(self, setting_id: str, owners: Mapping[str, SettingOwner]) -> str | None:
        """Why the value given for ``setting_id`` cannot be used, or None (also when none
        was given)."""
        if setting_id not in self.texts:
            return None
        owner = owners.get(setting_id)
        text = self.texts[setting_id]
        if owner is None:
            return (
                f"--toggles {setting_id}={text!r}: there is no setting {setting_id!r}; "
                "`vis settings list` shows the settings Vis knows"
            )
        if owner.setting.is_secret:
            where = (
                "Vis saves no secret for a project's extension, so it keeps its default"
                if owner.is_project
                else f"save it in Settings or with `vis settings set {setting_id}`"
            )
            return (
                f"--toggles refuses secret setting {setting_id!r}, because other programs can "
                f"read a command line; {where}"
            )
        try:
            parse_text(owner.setting, text)
        except ValueError as exc:
            return f"--toggles {setting_id}={text!r}: {exc}"
        return None
