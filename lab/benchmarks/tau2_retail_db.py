"""The tau2-bench retail database: db.json in tau2's canonical form, parsed once, copied fast.

Why its own module: the canonical form (§1 of `shared/benchmarks/tau2/retail/TOOLS.md`: every declared
field present, unset optional order fields as None, float fields as floats, keys in model field order) is
what makes `canonical_hash` reproduce tau2's database hash, and every replay starts from a copy; the tools
in `lab.benchmarks.tau2_retail` only read and write records in this form.
"""

from __future__ import annotations

import functools
import gc
import json
from collections.abc import Iterable
from pathlib import Path

from lab.benchmarks.tau2_folders import domain_dir
from lab.env.layout import DB_FILE
from lab.errors import LabInputError

ADDRESS_FIELDS = ("address1", "address2", "city", "country", "state", "zip")
_ORDER_OPTIONAL = ("cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                   "exchange_price_difference", "return_items", "return_payment_method_id")
_PAYMENT_METHOD_FIELDS = {"credit_card": ("source", "id", "brand", "last_four"),
                          "gift_card": ("source", "id", "balance"), "paypal": ("source", "id")}


# ---- the database: canonical form, cache, copies (§1, §3.2) ---------------------------------------------


def _pick(record: dict, fields: Iterable[str]) -> dict:
    return {name: record[name] for name in fields}


def _canonical_payment_method(method: dict) -> dict:
    canonical = _pick(method, _PAYMENT_METHOD_FIELDS[method["source"]])
    if "balance" in canonical:
        canonical["balance"] = float(canonical["balance"])
    return canonical


def _canonical_order(order: dict) -> dict:
    canonical = _pick(order, ("order_id", "user_id"))
    canonical["address"] = _pick(order["address"], ADDRESS_FIELDS)
    canonical["items"] = [{**_pick(i, ("name", "product_id", "item_id")), "price": float(i["price"]),
                           "options": i["options"]} for i in order["items"]]
    canonical["status"] = order["status"]
    canonical["fulfillments"] = [_pick(f, ("tracking_id", "item_ids")) for f in order["fulfillments"]]
    canonical["payment_history"] = [payment_entry(p["transaction_type"], p["amount"], p["payment_method_id"])
                                    for p in order["payment_history"]]
    canonical.update({name: order.get(name) for name in _ORDER_OPTIONAL})
    if canonical["exchange_price_difference"] is not None:
        canonical["exchange_price_difference"] = float(canonical["exchange_price_difference"])
    return canonical


def _canonical(raw: dict) -> dict:
    """db.json as tau2's data model dumps it; extra keys are dropped, as the model ignores them."""
    products = {pid: {"name": p["name"], "product_id": p["product_id"],
                      "variants": {vid: {**_pick(v, ("item_id", "options", "available")), "price": float(v["price"])}
                                   for vid, v in p["variants"].items()}}
                for pid, p in raw["products"].items()}
    users = {uid: {"user_id": u["user_id"], "name": _pick(u["name"], ("first_name", "last_name")),
                   "address": _pick(u["address"], ADDRESS_FIELDS), "email": u["email"],
                   "payment_methods": {mid: _canonical_payment_method(m) for mid, m in u["payment_methods"].items()},
                   "orders": u["orders"]}
             for uid, u in raw["users"].items()}
    return {"products": products, "users": users,
            "orders": {oid: _canonical_order(o) for oid, o in raw["orders"].items()}}


@functools.cache
def _cached_db(path: Path) -> dict:
    """The canonical database of one file, parsed once per process; never handed out itself."""
    try:
        return _canonical(json.loads(path.read_text(encoding="utf-8")))
    except (KeyError, TypeError, AttributeError) as exc:
        raise LabInputError(f"{path}: not a tau2 retail database ({type(exc).__name__}: {exc})") from None


def copy_db(db: dict) -> dict:
    """A deep copy of a canonical database, rebuilt record by record with the cyclic collector paused.

    Why by hand: on db.json (a busy 2-core machine) this takes about 16 ms, against 34 ms for an orjson
    round trip, about 40 ms for a generic recursive copy, 66 ms for a json round trip and 113 ms for
    `copy.deepcopy`; every replay of a trajectory starts with one. Why pause the collector: the copy's
    18,000 new containers would set off collections that scan every live database for cycles there are
    none of, doubling the time.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        return {"products": {pid: {**p, "variants": {vid: {**v, "options": dict(v["options"])}
                                                     for vid, v in p["variants"].items()}}
                             for pid, p in db["products"].items()},
                "users": {uid: {**u, "name": dict(u["name"]), "address": dict(u["address"]),
                                "payment_methods": {mid: dict(m) for mid, m in u["payment_methods"].items()},
                                "orders": list(u["orders"])}
                          for uid, u in db["users"].items()},
                "orders": {oid: _copy_order(o) for oid, o in db["orders"].items()}}
    finally:
        if paused:
            gc.enable()


def _copy_order(order: dict) -> dict:
    copied = {**order, "address": dict(order["address"]),
              "items": [{**item, "options": dict(item["options"])} for item in order["items"]],
              "fulfillments": [{"tracking_id": list(f["tracking_id"]), "item_ids": list(f["item_ids"])}
                               for f in order["fulfillments"]],
              "payment_history": [dict(payment) for payment in order["payment_history"]]}
    for name in ("exchange_items", "exchange_new_items", "return_items"):  # lists of ids once set
        if copied[name] is not None:
            copied[name] = list(copied[name])
    return copied


def load_retail_db(path: str | Path | None = None) -> dict:
    """A fresh canonical copy of db.json: `path` is the file, its folder, or None for the shared data."""
    return copy_db(retail_db_snapshot(path))


def retail_db_snapshot(path: str | Path | None = None) -> dict:
    """The cached canonical db.json itself, never to be mutated: for the checks that copy it anyway
    (the replay and `tau2_env.gold_db`), so a grading does not copy 2.8 MB twice."""
    file = Path(path) if path is not None and Path(path).is_file() else domain_dir("retail", path) / DB_FILE
    return _cached_db(file.resolve())




def payment_entry(kind: str, amount: float, method_id: str) -> dict:
    """A payment-history entry; `float` mirrors the model's coercion (an `abs(0)` diff becomes 0.0)."""
    return {"transaction_type": kind, "amount": float(amount), "payment_method_id": method_id}
