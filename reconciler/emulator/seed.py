"""Seed YAML <-> ``Store``, in the seed format described in README.md.

``load_seed`` accepts the documented keys plus a few optional extensions
(listed in README.md) and refuses unknown keys and values of the wrong type
with the place they were found, so a typo in a hand-written seed is not
silently ignored and never ends in a traceback.
``dump_store`` writes the same format back; loading its output gives an
equal store (ids, timestamps and the id counters included).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from reconciler.emulator import plan_items
from reconciler.emulator.entities import (
    AccessEntry,
    AccessList,
    Account,
    Asset,
    CustomField,
    Deal,
    File,
    Group,
    PlanItem,
    Tag,
    Template,
    User,
    Workspace,
)
from reconciler.emulator.store import Company, IdSource, Store
from reconciler.errors import ConfigError
from reconciler.vocabulary import ROLES


class SeedError(ConfigError, ValueError):
    """The seed or data file is malformed; the message names the place.

    A ``ConfigError`` (so the CLI reports it as exit 1 with this message,
    wherever the emulator is built) and, as before, a ``ValueError``."""


def _check(raw: Any, allowed: set[str], where: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise SeedError(f"{where}: expected a mapping, got {type(raw).__name__}")
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise SeedError(f"{where}: unknown {'key' if len(unknown) == 1 else 'keys'} {', '.join(unknown)} "
                        f"(allowed: {', '.join(sorted(allowed))})")
    for key in required:
        if raw.get(key) in (None, ""):
            raise SeedError(f"{where}: {key!r} is required")
    return dict(raw)


def _list(raw: Any, where: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise SeedError(f"{where}: expected a list")
    return raw


def _number(raw: Any, where: str, kind: type[int] | type[float] = int) -> Any:
    """``raw`` as an int (or a finite float); a bool, text or a fraction
    where a whole number belongs is refused with its place."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) \
            or (kind is int and not float(raw).is_integer()):
        noun = "a whole number" if kind is int else "a number"
        raise SeedError(f"{where}: expected {noun}, got {raw!r}")
    return kind(raw)


def _str_map(raw: Any, where: str) -> dict[str, str]:
    """A mapping of id to value (custom-field values), as strings."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise SeedError(f"{where}: expected a mapping of field id to value")
    return {str(k): str(v) for k, v in raw.items()}


class _Loader:
    """One pass over the seed; ids missing from it are handed out at the end,
    after every explicit id has been claimed, so a generated id can never
    collide with one written further down the file."""

    def __init__(self, now: str, ids: IdSource) -> None:
        self.now = now
        self.ids = ids
        self.pending: list[tuple[str, Callable[[str], None]]] = []
        self.homepage_flags: dict[int, bool] = {}

    def id_of(self, raw: Mapping[str, Any], prefix: str, assign: Callable[[str], None]) -> str:
        explicit = raw.get("id")
        if explicit:
            self.ids.claim(str(explicit))
            return str(explicit)
        self.pending.append((prefix, assign))
        return ""

    def finish(self) -> None:
        for prefix, assign in self.pending:
            assign(self.ids.new(prefix))

    def stamps(self, raw: Mapping[str, Any]) -> tuple[str, str]:
        created = str(raw.get("createdAt") or self.now)
        return created, str(raw.get("updatedAt") or created)


def load_seed(doc: Any, *, now: str) -> Store:
    """A ``Store`` from a parsed seed document; ``now`` stamps entities
    the seed gives no ``createdAt`` for."""
    top = _check(doc, {"companies", "nextIds"}, "seed", ("companies",))
    next_ids = top.get("nextIds") or {}
    if not isinstance(next_ids, Mapping):
        raise SeedError("nextIds: expected a mapping of id prefix to number")
    ids = IdSource({str(k): _number(v, f"nextIds.{k}") for k, v in next_ids.items()})
    loader = _Loader(now, ids)
    store = Store(ids=ids)
    companies = top["companies"]
    if not isinstance(companies, Mapping) or not companies:
        raise SeedError("seed: 'companies' must be a non-empty mapping of name to company")
    for name, raw in companies.items():
        store.companies[str(name)] = _load_company(loader, str(name), raw)
    loader.finish()
    for company in store.companies.values():
        _form_groups(company, loader.homepage_flags)
        _add_access_users(company, ids, now)
        _default_account_owners(company)
    tokens = [c.token for c in store.companies.values()]
    if len(set(tokens)) != len(tokens):
        raise SeedError("seed: two companies share a token")
    return store


_COMPANY_KEYS = {"token", "verified", "plan", "credits", "users", "accounts", "deals", "templates",
                 "tags", "customFields", "workspaces", "files", "assets"}


def _load_company(ld: _Loader, name: str, raw: Any) -> Company:
    where = f"companies.{name}"
    c = _check(raw, _COMPANY_KEYS, where, ("token",))
    if c.get("plan", "paid") not in ("paid", "free"):
        raise SeedError(f"{where}.plan: expected paid or free")
    company = Company(name=name, token=str(c["token"]), verified=bool(c.get("verified", True)),
                      plan=str(c.get("plan", "paid")), credits=_number(c.get("credits", 0), f"{where}.credits"))
    for i, u in enumerate(_list(c.get("users"), f"{where}.users")):
        company.users.append(_load_user(ld, u, f"{where}.users[{i}]"))
    for i, a in enumerate(_list(c.get("accounts"), f"{where}.accounts")):
        company.accounts.append(_load_account(ld, a, f"{where}.accounts[{i}]"))
    for i, d in enumerate(_list(c.get("deals"), f"{where}.deals")):
        company.deals.append(_load_deal(ld, d, f"{where}.deals[{i}]"))
    for i, t in enumerate(_list(c.get("templates"), f"{where}.templates")):
        company.templates.append(_load_template(ld, t, f"{where}.templates[{i}]"))
    for i, t in enumerate(_list(c.get("tags"), f"{where}.tags")):
        t = _check(t, {"id", "title", "createdAt", "updatedAt"}, f"{where}.tags[{i}]", ("title",))
        tag = Tag("", str(t["title"]), *ld.stamps(t))
        tag.id = ld.id_of(t, "tag", _id_setter(tag))
        company.tags.append(tag)
    for i, f in enumerate(_list(c.get("customFields"), f"{where}.customFields")):
        company.custom_fields.append(_load_custom_field(ld, f, f"{where}.customFields[{i}]"))
    for i, w in enumerate(_list(c.get("workspaces"), f"{where}.workspaces")):
        company.workspaces.append(_load_workspace(ld, company, w, f"{where}.workspaces[{i}]"))
    for i, f in enumerate(_list(c.get("files"), f"{where}.files")):
        company.files.append(_load_file(ld, f, f"{where}.files[{i}]"))
    for i, a in enumerate(_list(c.get("assets"), f"{where}.assets")):
        company.assets.append(_load_asset(ld, a, f"{where}.assets[{i}]"))
    for ws in company.workspaces:
        if ws.account_id is not None and company.account(ws.account_id) is None:
            raise SeedError(f"{where}: workspace {ws.id or ws.name!r} names unknown account {ws.account_id!r}")
    return company


def _form_groups(company: Company, homepage_flags: Mapping[int, bool]) -> None:
    """Members of a seed group share the homepage's list: the homepage is the
    member marked ``homepage: true``, else the first member listed."""
    members: dict[str, list[Workspace]] = {}
    for ws in company.workspaces:
        if ws.group is not None:
            members.setdefault(ws.group, []).append(ws)
    for gid, group_members in members.items():
        home = next((w for w in group_members if homepage_flags.get(id(w))), group_members[0])
        company.groups[gid] = Group(gid, home.id, home.access)
        for ws in group_members:
            company.share_access(ws, home.access)


def _add_access_users(company: Company, ids: IdSource, now: str) -> None:
    """Every email on an access list is a user of the company (a
    WorkspaceUser carries a User with an id); missing ones are added."""
    for access in company.access_lists():
        for entry in access.users:
            if company.user_by_email(entry.key) is None:
                company.users.append(User(ids.new("usr"), entry.key, None, None, None, now, now))


def _default_account_owners(company: Company) -> None:
    """``ownerId`` is a string in the description: an account the seed gives
    no owner is owned by the company's first user (seed order, then people
    first seen on access lists), or ``""`` when the company has no user."""
    owner = company.users[0].id if company.users else ""
    for acc in company.accounts:
        if acc.owner_id is None:
            acc.owner_id = owner


def _load_user(ld: _Loader, raw: Any, where: str) -> User:
    u = _check(raw, {"id", "email", "firstName", "lastName", "avatar", "createdAt", "updatedAt"}, where, ("email",))
    user = User("", str(u["email"]).lower(), u.get("firstName"), u.get("lastName"), u.get("avatar"), *ld.stamps(u))
    user.id = ld.id_of(u, "usr", lambda v: setattr(user, "id", v))
    return user


def _load_account(ld: _Loader, raw: Any, where: str) -> Account:
    a = _check(raw, {"id", "name", "website", "ownerId", "logo", "crmTwoAccountId", "crmOneCompanyId",
                     "customFields", "createdAt", "updatedAt"}, where, ("name",))
    acc = Account("", str(a["name"]), a.get("website"), _opt_str(a.get("ownerId")), a.get("logo"),
                  _opt_str(a.get("crmTwoAccountId")), _opt_str(a.get("crmOneCompanyId")),
                  _str_map(a.get("customFields"), f"{where}.customFields"), *ld.stamps(a))
    acc.id = ld.id_of(a, "acc", lambda v: setattr(acc, "id", v))
    return acc


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _load_deal(ld: _Loader, raw: Any, where: str) -> Deal:
    d = _check(raw, {"id", "crmOneDealId", "crmTwoOpportunityId", "crmOneCompanyId", "crmTwoAccountId", "name",
                     "amount", "type", "stage", "createdDate", "closeDate", "createdAt", "updatedAt"}, where)
    if (d.get("crmOneDealId") is None) == (d.get("crmTwoOpportunityId") is None):
        raise SeedError(f"{where}: a deal carries exactly one of crmOneDealId and crmTwoOpportunityId")
    deal = Deal("", _opt_str(d.get("crmOneDealId")), _opt_str(d.get("crmTwoOpportunityId")),
                _opt_str(d.get("crmOneCompanyId")), _opt_str(d.get("crmTwoAccountId")), d.get("name"),
                d.get("amount"), d.get("type"), d.get("stage"), d.get("createdDate"), d.get("closeDate"),
                *ld.stamps(d))
    deal.id = ld.id_of(d, "deal", lambda v: setattr(deal, "id", v))
    return deal


def _load_template(ld: _Loader, raw: Any, where: str) -> Template:
    t = _check(raw, {"id", "name", "workspaceTitle", "requiresDeal", "sections", "pages", "tasks"}, where, ("id",))
    tpl = Template(str(t["id"]), str(t.get("name") or t["id"]), t.get("workspaceTitle"),
                   bool(t.get("requiresDeal", False)), [], [], [])
    ld.ids.claim(tpl.id)
    for kind, attr, prefix in (("section", "sections", "tsec"), ("page", "pages", "tpg"), ("task", "tasks", "ttask")):
        for i, item in enumerate(_list(t.get(attr), f"{where}.{attr}")):
            if not isinstance(item, Mapping):
                raise SeedError(f"{where}.{attr}[{i}]: expected a mapping")
            try:
                fields = plan_items.fields_from_seed(kind, dict(item), i, f"{where}.{attr}[{i}]")
            except ValueError as exc:
                raise SeedError(str(exc)) from None
            entry: dict[str, Any] = {"id": item.get("id"), "fields": fields}
            if not entry["id"]:
                ld.pending.append((prefix, functools.partial(entry.__setitem__, "id")))
            else:
                ld.ids.claim(str(entry["id"]))
            getattr(tpl, attr).append(entry)
    return tpl


def _load_custom_field(ld: _Loader, raw: Any, where: str) -> CustomField:
    f = _check(raw, {"id", "name", "variableName", "type", "objectType", "options", "createdAt", "updatedAt"},
               where, ("name",))
    if f.get("objectType", "workspace") not in ("workspace", "account", "deal"):
        raise SeedError(f"{where}.objectType: expected workspace, account or deal")
    options = _list(f.get("options"), f"{where}.options")
    for i, option in enumerate(options):
        _check(option, {"index", "label", "value"}, f"{where}.options[{i}]")
    cf = CustomField("", str(f["name"]), str(f.get("variableName") or f["name"]), str(f.get("type", "richText")),
                     str(f.get("objectType", "workspace")), [dict(o) for o in options], *ld.stamps(f))
    cf.id = ld.id_of(f, "cf", lambda v: setattr(cf, "id", v))
    return cf


_WS_KEYS = {"id", "name", "account", "published", "archived", "group", "homepage", "users", "domains", "sections",
            "pages", "tasks", "templateId", "startDate", "targetEndDate", "actualEndDate", "deal", "customFields",
            "createdAt", "updatedAt"}


def _load_workspace(ld: _Loader, company: Company, raw: Any, where: str) -> Workspace:
    w = _check(raw, _WS_KEYS, where, ("name",))
    ws = Workspace("", str(w["name"]), _opt_str(w.get("account")), bool(w.get("published", True)), bool(w.get("archived", False)),
                   AccessList(), template_id=w.get("templateId"), start_date=_opt_str(w.get("startDate")),
                   target_end_date=_opt_str(w.get("targetEndDate")), actual_end_date=_opt_str(w.get("actualEndDate")),
                   deal_id=w.get("deal"), custom_fields=_str_map(w.get("customFields"), f"{where}.customFields"))
    ws.created_at, ws.updated_at = ld.stamps(w)
    ws.id = ld.id_of(w, "ws", lambda v: setattr(ws, "id", v))
    ws.access = _load_access(ld, w, where)
    if w.get("group") is not None:
        ws.group = str(w["group"])
        ld.ids.claim(ws.group)
        ld.homepage_flags[id(ws)] = bool(w.get("homepage", False))
    for kind, attr, prefix in (("section", "sections", "sec"), ("page", "pages", "pg"), ("task", "tasks", "task")):
        for i, item in enumerate(_list(w.get(attr), f"{where}.{attr}")):
            if not isinstance(item, Mapping):
                raise SeedError(f"{where}.{attr}[{i}]: expected a mapping")
            try:
                fields = plan_items.fields_from_seed(kind, dict(item), i, f"{where}.{attr}[{i}]")
            except ValueError as exc:
                raise SeedError(str(exc)) from None
            if kind == "task" and fields["status"] == plan_items.COMPLETED and not fields["completedAt"]:
                fields["completedAt"] = ld.now
            obj = PlanItem("", fields, *ld.stamps(item))
            obj.id = ld.id_of(item, prefix, _id_setter(obj))
            getattr(ws, attr).append(obj)
    return ws


def _load_access(ld: _Loader, w: Mapping[str, Any], where: str) -> AccessList:
    access = AccessList()
    for attr, key, prefix, entries in (("users", "email", "wu", access.users), ("domains", "domain", "wd", access.domains)):
        for i, e in enumerate(_list(w.get(attr), f"{where}.{attr}")):
            place = f"{where}.{attr}[{i}]"
            e = _check(e, {"id", key, "role", "createdAt", "updatedAt"}, place, (key, "role"))
            if e["role"] not in ROLES:  # the service answers no other role, so a seed must not hold one
                raise SeedError(f"{place}.role: {e['role']!r} is not one of {', '.join(ROLES)}")
            entry = AccessEntry("", str(e[key]).lower(), e["role"], *ld.stamps(e))
            entry.id = ld.id_of(e, prefix, _id_setter(entry))
            entries.append(entry)
    return access


def _load_file(ld: _Loader, raw: Any, where: str) -> File:
    f = _check(raw, {"id", "fileName", "mimeType", "uploadToken", "expiresAt", "uploadStatus", "size", "sha256",
                     "assetId", "readyAt", "createdAt", "updatedAt"}, where, ("fileName", "mimeType", "uploadToken"))
    ready_at = f.get("readyAt")
    file = File("", str(f["fileName"]), str(f["mimeType"]), str(f["uploadToken"]),
                _number(f.get("expiresAt") or 0, f"{where}.expiresAt", float),
                str(f.get("uploadStatus", "in_progress")),
                None if f.get("size") is None else _number(f["size"], f"{where}.size"), f.get("sha256"),
                f.get("assetId"), None if ready_at is None else _number(ready_at, f"{where}.readyAt", float))
    file.created_at, file.updated_at = ld.stamps(f)
    file.id = ld.id_of(f, "file", lambda v: setattr(file, "id", v))
    return file


def _load_asset(ld: _Loader, raw: Any, where: str) -> Asset:
    a = _check(raw, {"id", "type", "name", "description", "transcript", "isInternal", "fileId", "url", "customCode",
                     "tagIds", "metadata", "views", "shares", "createdAt", "updatedAt"}, where, ("type", "name"))
    asset = Asset("", str(a["type"]), str(a["name"]), str(a.get("description", "")), str(a.get("transcript", "")),
                  bool(a.get("isInternal", False)), a.get("fileId"), a.get("url"), a.get("customCode"),
                  [str(t) for t in _list(a.get("tagIds"), f"{where}.tagIds")], a.get("metadata"),
                  _number(a.get("views", 0), f"{where}.views"), _number(a.get("shares", 0), f"{where}.shares"))
    asset.created_at, asset.updated_at = ld.stamps(a)
    asset.id = ld.id_of(a, "asset", lambda v: setattr(asset, "id", v))
    return asset


# --- dump ---------------------------------------------------------------

def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def dump_store(store: Store) -> dict[str, Any]:
    """The store as a seed document ``load_seed`` reads back unchanged."""
    return {
        "companies": {name: _dump_company(c) for name, c in store.companies.items()},
        "nextIds": dict(sorted(store.ids.next_numbers.items())),
    }


def _stamps(obj: Any) -> dict[str, str]:
    return {"createdAt": obj.created_at, "updatedAt": obj.updated_at}


def _dump_company(c: Company) -> dict[str, Any]:
    out: dict[str, Any] = {"token": c.token, "verified": c.verified, "plan": c.plan, "credits": c.credits}
    out["users"] = [_drop_none({"id": u.id, "email": u.email, "firstName": u.first_name, "lastName": u.last_name,
                                "avatar": u.avatar, **_stamps(u)}) for u in c.users]
    out["accounts"] = [{"id": a.id, "name": a.name, "website": a.website, "ownerId": a.owner_id, "logo": a.logo,
                        "crmOneCompanyId": a.crm_one_company_id, "crmTwoAccountId": a.crm_two_account_id,
                        "customFields": dict(a.custom_fields), **_stamps(a)} for a in c.accounts]
    out["deals"] = [_drop_none({"id": d.id, "crmOneDealId": d.crm_one_deal_id,
                                "crmTwoOpportunityId": d.crm_two_opportunity_id,
                                "crmOneCompanyId": d.crm_one_company_id, "crmTwoAccountId": d.crm_two_account_id,
                                "name": d.name, "amount": d.amount, "type": d.type, "stage": d.stage,
                                "createdDate": d.created_date, "closeDate": d.close_date, **_stamps(d)})
                    for d in c.deals]
    out["templates"] = [_drop_none({
        "id": t.id, "name": t.name, "workspaceTitle": t.workspace_title, "requiresDeal": t.requires_deal,
        "sections": [{"id": s["id"], **plan_items.fields_to_seed("section", s["fields"])} for s in t.sections],
        "pages": [{"id": p["id"], **plan_items.fields_to_seed("page", p["fields"])} for p in t.pages],
        "tasks": [{"id": k["id"], **plan_items.fields_to_seed("task", k["fields"])} for k in t.tasks],
    }) for t in c.templates]
    out["tags"] = [{"id": t.id, "title": t.title, **_stamps(t)} for t in c.tags]
    out["customFields"] = [{"id": f.id, "name": f.name, "variableName": f.variable_name, "type": f.type,
                            "objectType": f.object_type, "options": f.options, **_stamps(f)} for f in c.custom_fields]
    out["workspaces"] = [_dump_workspace(c, w) for w in c.workspaces]
    out["files"] = [_drop_none({"id": f.id, "fileName": f.file_name, "mimeType": f.mime_type,
                                "uploadToken": f.upload_token, "expiresAt": f.expires_at,
                                "uploadStatus": f.upload_status, "size": f.size, "sha256": f.sha256,
                                "assetId": f.asset_id, "readyAt": f.ready_at, **_stamps(f)}) for f in c.files]
    out["assets"] = [_drop_none({"id": a.id, "type": a.type, "name": a.name, "description": a.description,
                                 "transcript": a.transcript, "isInternal": a.is_internal, "fileId": a.file_id,
                                 "url": a.url, "customCode": a.custom_code, "tagIds": list(a.tag_ids),
                                 "metadata": a.metadata, "views": a.views, "shares": a.shares, **_stamps(a)})
                     for a in c.assets]
    return out


def _dump_workspace(c: Company, w: Workspace) -> dict[str, Any]:
    out: dict[str, Any] = _drop_none({"id": w.id, "name": w.name, "account": w.account_id})
    out["published"] = w.published
    if w.archived:
        out["archived"] = True
    if w.group is not None:
        out["group"] = w.group
        if c.groups[w.group].homepage == w.id:
            out["homepage"] = True
    out["users"] = [{"id": e.id, "email": e.key, "role": e.role, "createdAt": e.created_at,
                     "updatedAt": e.updated_at} for e in w.access.users]
    out["domains"] = [{"id": e.id, "domain": e.key, "role": e.role, "createdAt": e.created_at,
                       "updatedAt": e.updated_at} for e in w.access.domains]
    for kind, attr in (("section", "sections"), ("page", "pages"), ("task", "tasks")):
        out[attr] = [{"id": i.id, **plan_items.fields_to_seed(kind, i.fields), **_stamps(i)} for i in getattr(w, attr)]
    out.update(_drop_none({"templateId": w.template_id, "startDate": w.start_date, "targetEndDate": w.target_end_date,
                           "actualEndDate": w.actual_end_date, "deal": w.deal_id}))
    if w.custom_fields:
        out["customFields"] = dict(w.custom_fields)
    out.update(_stamps(w))
    return out


class _HasId(Protocol):
    id: str


def _id_setter(obj: _HasId) -> Callable[[str], None]:
    """Sets ``obj.id`` once the loader hands out the ids a seed left out."""
    def assign(value: str) -> None:
        obj.id = value
    return assign
