"""Generated hostile documents: what a guest (or a saved file a guest's answers
went into) may say, in every shape the CLI must survive.

Each generator takes a valid document and yields (what, doc) pairs, where doc
is a Python value, or Raw(TEXT) for JSON text Python would not write
(duplicate members, huge numbers). They are deterministic: the same base
gives the same documents in the same order, so a failure names its document.

- wrong types: every member and array element (two of each array) replaced by
  values of other types, nulls and extremes, a few per place;
- missing members: each member of the first two levels removed;
- duplicates: each array's elements repeated, named elements again under the
  same name, the name in another case, with an invisible character, empty;
  the same errors entry many times, errors naming a repeated disk;
- duplicate members in the JSON text itself;
- very many: disks, NICs, errors, flags, NUMA nodes, samples.
"""
import copy
import json


class Raw:
    """JSON text sent or saved as it is."""

    def __init__(self, text):
        self.text = text

    def dumps(self):
        return self.text


def dumps(doc):
    return doc.dumps() if isinstance(doc, Raw) else json.dumps(doc, ensure_ascii=False)


# Values of every JSON type, nulls and extremes: what a place may hold instead.
WRONG = [
    None, 0, -1, 1.5, True, "", [], {}, [None], "\u200b", "x" * 4096,
    Raw("1e308"), Raw("-1e308"), Raw("18446744073709551616"), Raw("-9223372036854775809"),
    "\u202e\x1b[31m\x07", {"": None}, Raw("0.0000000000000000000001"),
]
PER_PLACE = 4  # how many of WRONG each place gets, in turn


def _places(value, path=()):
    """Every (path, value) of a document: members, and the first two elements of arrays."""
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _places(child, path + (key,))
    elif isinstance(value, list):
        for i, child in enumerate(value[:2]):
            yield from _places(child, path + (i,))


def _set(doc, path, value):
    node = doc
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


def _text_with(doc, path, raw):
    """doc as JSON text with the place at path written as raw text."""
    marker = "\u0001gendocs-marker\u0001"
    copied = copy.deepcopy(doc)
    _set(copied, path, marker)
    return Raw(json.dumps(copied, ensure_ascii=False).replace(json.dumps(marker), raw))


def _path_name(path):
    out = ""
    for step in path:
        out += "[%d]" % step if isinstance(step, int) else ("." if out else "") + step
    return out or "(root)"


def wrong_types(base, skip=()):
    """Each place replaced by PER_PLACE values of WRONG, chosen in turn."""
    turn = 0
    for path, value in _places(base):
        if not path or any(path[:len(s)] == s for s in skip):
            continue
        for _ in range(PER_PLACE):
            wrong = WRONG[turn % len(WRONG)]
            turn += 1
            if type(wrong) is type(value) and wrong == value:
                continue
            what = "%s = %s" % (_path_name(path), dumps(wrong)[:40])
            if isinstance(wrong, Raw):
                yield what, _text_with(base, path, wrong.text)
            else:
                doc = copy.deepcopy(base)
                _set(doc, path, wrong)
                yield what, doc


def missing_members(base):
    """Each member of the first two levels removed."""
    for key, value in base.items():
        doc = copy.deepcopy(base)
        del doc[key]
        yield "no %s" % key, doc
        if isinstance(value, dict):
            for sub in value:
                doc = copy.deepcopy(base)
                del doc[key][sub]
                yield "no %s.%s" % (key, sub), doc


def _arrays(value, path=()):
    if isinstance(value, list):
        yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _arrays(child, path + (key,))
    elif isinstance(value, list):
        for i, child in enumerate(value[:2]):
            yield from _arrays(child, path + (i,))


NAME_KEYS = ("name", "member", "metric")


def _renamed(element, how):
    element = copy.deepcopy(element)
    for key in NAME_KEYS:
        if isinstance(element, dict) and isinstance(element.get(key), str):
            name = element[key]
            element[key] = {"upper": name.upper(), "invisible": name + "\u200b",
                            "empty": "", "bidi": "\u202e" + name}[how]
            return element
    return None


def duplicates(base):
    """Arrays with repeated elements, and named elements again under near names."""
    for path, array in _arrays(base):
        if not array or not path:
            continue
        where = _path_name(path)
        doc = copy.deepcopy(base)
        _set(doc, path, array + array)
        yield "%s twice over" % where, doc
        doc = copy.deepcopy(base)
        _set(doc, path, [array[0]] * 3)
        yield "%s[0] three times" % where, doc
        for how in ("upper", "invisible", "empty", "bidi"):
            again = _renamed(array[0], how)
            if again is not None:
                doc = copy.deepcopy(base)
                _set(doc, path, array + [again])
                yield "%s[0] again, name %s" % (where, how), doc


def duplicate_members(base):
    """JSON text with a member written twice, at the top and one level down."""
    text = json.dumps(base, ensure_ascii=False)
    for key, value in base.items():
        one = json.dumps(key) + ": "
        at = text.find(one)
        if at < 0:
            continue
        yield "member %s twice (null second)" % key, Raw(
            text[:at] + one + "null, " + text[at:])
        if isinstance(value, dict) and value:
            sub = next(iter(value))
            inner = json.dumps(value, ensure_ascii=False)
            twice = inner[:1] + json.dumps(sub) + ": 0, " + inner[1:]
            yield "member %s.%s twice" % (key, sub), Raw(text.replace(inner, twice, 1))


def many(base, key, count, name_key="name"):
    """base with array member key grown to count elements, distinct names where named."""
    array = base.get(key)
    if not isinstance(array, list) or not array:
        return None
    doc = copy.deepcopy(base)
    grown = []
    for i in range(count):
        element = copy.deepcopy(array[i % len(array)])
        if isinstance(element, dict) and isinstance(element.get(name_key), str):
            element[name_key] = "%s%d" % (element[name_key], i)
        grown.append(element)
    doc[key] = grown
    return doc


# ---- facts documents -----------------------------------------------------------------------

def facts_documents(base):
    """Hostile variants of one gb-get-facts result."""
    yield from wrong_types(base)
    yield from missing_members(base)
    yield from duplicates(base)
    yield from duplicate_members(base)
    # errors entries: the same member over and over, and naming a repeated disk
    doc = copy.deepcopy(base)
    doc["errors"] = [{"member": "block[0].bus", "reason": "r"}] * 50 + [
        {"member": "block.%s.bus" % d.get("name", "x"), "reason": "r"}
        for d in (base.get("block") or []) if isinstance(d, dict)] * 2
    if isinstance(doc.get("block"), list) and doc["block"]:
        doc["block"] = doc["block"] * 2
        doc["block"][0] = dict(doc["block"][0], bus=None)
    yield "errors naming a disk listed twice, 50 times", doc
    for key, count in (("block", 500), ("net", 500), ("errors", 2000)):
        doc = many(base, key, count, "member" if key == "errors" else "name")
        if doc is not None:
            yield "%d %s" % (count, key), doc
    doc = copy.deepcopy(base)
    if isinstance(doc.get("cpu"), dict):
        doc["cpu"]["flags"] = ["f%d" % i for i in range(5000)] + ["aes"] * 100
        yield "5100 cpu flags", doc
    mem = base.get("memory")
    if isinstance(mem, dict) and isinstance(mem.get("numa"), dict):
        doc = copy.deepcopy(base)
        nodes = doc["memory"]["numa"].get("nodes") or [{}]
        doc["memory"]["numa"]["nodes"] = [dict(nodes[0], id=i % 3) for i in range(256)]
        yield "256 NUMA nodes with 3 ids", doc
    for what, doc in (("null", None), ("array", []), ("string", "facts"), ("number", 0),
                      ("empty object", {})):
        yield "the whole document is %s" % what, doc


# ---- bench results -------------------------------------------------------------------------

def result_documents(base):
    """Hostile variants of one bench result (gb-bench-status's result)."""
    # the facts inside a result are the facts documents' business; here a few of them
    yield from wrong_types(base, skip=(("facts",),))
    yield from missing_members(base)
    yield from duplicates(base)
    yield from duplicate_members(base)
    metrics = base.get("metrics") or []
    if metrics and isinstance(metrics[0], dict):
        doc = copy.deepcopy(base)
        doc["metrics"] = [dict(metrics[0], labels=dict(metrics[0].get("labels") or {},
                                                       extra="%d" % i))
                          for i in range(10000)]
        yield "10000 samples", doc
        doc = copy.deepcopy(base)
        doc["metrics"] = [dict(metrics[0], value=v) for v in (1e308, 1e308, -1e308)]
        yield "samples near the double's limits", doc
        doc = copy.deepcopy(base)
        doc["metrics"] = [dict(metrics[0], runs=[1e308, -1e308, 1e308])]
        yield "runs near the double's limits", doc
    for what, doc in (("null", None), ("array", []), ("string", "r"), ("empty object", {})):
        yield "the whole result is %s" % what, doc


# ---- saved documents (what facts, audit and bench write with --format json) -----------------

def saved_documents(command, guests):
    """Saved documents of command around guests [(name, result)]: the names
    hostile too (twice, empty, case, invisible), and many guests."""
    def doc(entries):
        return {"guestbench": "0.1.0", "command": command, "guests": [
            {"name": n, "target": n, "status": "ok", "result": r} for n, r in entries]}
    yield "as written", doc(guests)
    first = guests[0]
    yield "a guest twice", doc(guests + [first])
    yield "an empty name", doc(guests + [("", first[1])])
    yield "names differing in case", doc(guests + [(first[0].upper(), first[1])])
    yield "an invisible character", doc(guests + [(first[0] + "\u200b", first[1])])
    yield "2000 guests", doc([("g%d" % i, guests[i % len(guests)][1]) for i in range(2000)])
    d = doc(guests)
    d["guests"].append(7)
    yield "a guest that is a number", d
    d = doc(guests)
    d["guests"].append({"name": "x", "status": 5})
    yield "a guest with a status of the wrong type", d
