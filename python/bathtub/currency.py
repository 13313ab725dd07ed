"""The currency of cost figures: an ISO 4217 code, optional wherever costs are entered.

Costs are plain numbers to the library (it never converts); the code rides with them so every
page and report can name the unit of a cost. The list is ISO 4217's active codes (List One,
2025), so a typo ("EUR " or "EURO") is refused at the door rather than printed beside a figure.
"""

from __future__ import annotations

from typing import Any

from bathtub.errors import InputError
from bathtub.validate import Check

ISO_4217 = tuple("""
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD
CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD
GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT
LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR
NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP
STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD
XCG XOF XPF YER ZAR ZMW ZWG
""".split())
_CODES = frozenset(ISO_4217)
RULE = "must be an ISO 4217 currency code: three capital letters such as EUR, USD or GBP"
DESCRIPTION = ("Currency of every cost given here, an ISO 4217 code (EUR, USD, GBP, ...): shown beside each "
               "cost figure on pages and reports; never converted.")


def _check(v: Any, field: str) -> str:
    if not isinstance(v, str) or v not in _CODES:
        raise InputError(field, RULE)
    return v


CURRENCY = Check(_check, {"type": "string", "enum": list(ISO_4217), "description": DESCRIPTION})
