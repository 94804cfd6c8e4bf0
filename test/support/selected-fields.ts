type Json = Record<string, unknown>;

/** The fields that hold a list of objects, of which `fields` may name members (`pages.path`). */
const NESTED = ['contacts', 'pages'];

/**
 * An item as the contract says a read with `fields` (these names) returns it, written apart from
 * the server's code: the fields named and the id, in the item's order; a nested list (a company's
 * contacts, a visit's pages) whole when it is named, else each element with the `<list>.<field>`
 * named (and its id, a contact's; a page view has none).
 */
export function restricted(item: Json, names: readonly string[]): Json {
  const kept: Json = {};
  for (const [name, value] of Object.entries(item)) {
    if (name === 'id' || names.includes(name)) {
      kept[name] = value;
    } else if (NESTED.includes(name)) {
      const prefix = `${name}.`;
      const fields = names.filter((n) => n.startsWith(prefix)).map((n) => n.slice(prefix.length));
      if (fields.length > 0) {
        kept[name] = (value as Json[]).map((element) =>
          Object.fromEntries(
            Object.entries(element).filter(([field]) => field === 'id' || fields.includes(field)),
          ),
        );
      }
    }
  }
  return kept;
}
