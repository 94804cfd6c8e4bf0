type Json = Record<string, unknown>;

/**
 * An item as the contract says a read with `fields` (these names) returns it, written apart from
 * the server's code: the fields named and the id, in the item's order; the contacts whole when
 * `contacts` is named, else each with the `contacts.<field>` named and its id.
 */
export function restricted(item: Json, names: readonly string[]): Json {
  const kept: Json = {};
  for (const [name, value] of Object.entries(item)) {
    if (name === 'id' || names.includes(name)) {
      kept[name] = value;
    } else if (name === 'contacts') {
      const fields = names.filter((n) => n.startsWith('contacts.')).map((n) => n.slice(9));
      if (fields.length > 0) {
        kept.contacts = (value as Json[]).map((contact) =>
          Object.fromEntries(
            Object.entries(contact).filter(([field]) => field === 'id' || fields.includes(field)),
          ),
        );
      }
    }
  }
  return kept;
}
