"""Oracle of the example task file pizza.toml: plain Python over named values."""

TOPPINGS = ("tomato", "cheese", "ham", "salami", "mushrooms", "pineapple")


def is_valid_order(order: dict[str, bool]) -> bool:
    one_base = order["thin_base"] != order["thick_base"]
    few_toppings = sum(order[t] for t in TOPPINGS) <= 3
    vegetarian_right = order["vegetarian"] == (not order["ham"] and not order["salami"])
    return one_base and few_toppings and vegetarian_right and not (order["pineapple"] and order["salami"])
