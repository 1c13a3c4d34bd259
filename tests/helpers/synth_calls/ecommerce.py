"""Known-good calls for every tool of the ecommerce domain, chosen from the generated records (see conftest)."""

from __future__ import annotations

from datetime import date

from lab.synth.domains import ecommerce_data
from tests.helpers.synth_calls.common import Calls, first


def calls(db: dict) -> Calls:
    today = ecommerce_data.TODAY
    c = db["customers"]["CUS-2001"]
    card = first(db["payment_methods"].values(), lambda m: m["customer_id"] == c["customer_id"] and m["kind"] == "card")
    stocked = first(db["variants"].values(), lambda v: v["stock"] >= 2)
    open_orders = [o for o in db["orders"].values() if o["status"] in ("pending", "processing")
                   and db["payment_methods"][o["payment_method_id"]]["kind"] != "gift_card"]
    rushable = first(open_orders, lambda o: o["shipping_speed"] == "standard")
    couponable = first(open_orders, lambda o: o["coupon_code"] is None
                        and o["customer_id"] not in db["coupons"]["WELCOME15"]["used_by"])

    def swaps(order: dict) -> list[tuple[str, str]]:
        held = {line["variant_id"] for line in order["items"]}
        return [(line["variant_id"], v["variant_id"]) for line in order["items"] for v in db["variants"].values()
                if v["product_id"] == db["variants"][line["variant_id"]]["product_id"] and v["variant_id"] not in held
                and v["stock"] >= line["quantity"]]
    swappable = first(open_orders, swaps)
    old, new = swaps(swappable)[0]
    delivered = first(db["orders"].values(), lambda o: o["status"] == "delivered"
                       and (today - date.fromisoformat(o["delivered_on"])).days <= ecommerce_data.RETURN_DAYS
                       and not any(r["order_id"] == o["order_id"] for r in db["returns"].values()))
    shipment, refund = first(db["shipments"].values(), bool), first(db["returns"].values(), bool)
    return {
        "find_customer_by_email": [("find_customer_by_email", {"email": c["email"].upper()})],
        "find_customer_by_name_zip": [("find_customer_by_name_zip", {"first_name": c["first_name"],
                                       "last_name": c["last_name"], "zip": c["address"]["zip"]})],
        "get_customer_details": [("get_customer_details", {"customer_id": c["customer_id"]})],
        "list_payment_methods": [("list_payment_methods", {"customer_id": c["customer_id"]})],
        "search_products": [("search_products", {"query": "SHOES"})],
        "get_product_details": [("get_product_details", {"product_id": stocked["product_id"]})],
        "get_order_details": [("get_order_details", {"order_id": delivered["order_id"]})],
        "get_shipment_details": [("get_shipment_details", {"shipment_id": shipment["shipment_id"]})],
        "get_return_details": [("get_return_details", {"return_id": refund["return_id"]})],
        "get_coupon_details": [("get_coupon_details", {"code": "summer10"})],
        "calculate": [("calculate", {"expression": "2 * 54.5 - 10"})],
        "transfer_to_human_agents": [("transfer_to_human_agents", {"summary": "Wants a bulk order quote."})],
        "place_order": [("place_order", {"customer_id": c["customer_id"], "variant_ids": [stocked["variant_id"]] * 2,
                                         "payment_method_id": card["method_id"]})],
        "cancel_order": [("cancel_order", {"order_id": rushable["order_id"], "reason": "found_cheaper"})],
        "modify_order_address": [("modify_order_address", {"order_id": rushable["order_id"], "street": "1 Harbour Walk",
                                                           "city": "Calder", "zip": "30111"})],
        "change_order_item": [("change_order_item", {"order_id": swappable["order_id"], "variant_id": old,
                                                     "new_variant_id": new})],
        "apply_coupon": [("apply_coupon", {"order_id": couponable["order_id"], "code": "welcome15"})],
        "set_shipping_speed": [("set_shipping_speed", {"order_id": rushable["order_id"], "speed": "express"})],
        "request_return": [("request_return", {"order_id": delivered["order_id"],
                                               "variant_id": delivered["items"][0]["variant_id"], "quantity": 1,
                                               "reason": "defective"})],
    }
