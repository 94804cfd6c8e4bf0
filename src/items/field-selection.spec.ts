import { RefusedValue } from '../http/query-parameter';
import { COMPANY_SELECTABLE } from '../companies/company.fields';
import { LEAD_SELECTABLE } from '../leads/lead.fields';
import { BySelection, parseFields, selectableNames, selectionKey } from './field-selection';
import { KEPT_STATEMENTS, keptStatementCount } from './kept-statements';

describe('parseFields', () => {
  it('keeps the declaration order, the id always, and the contacts whole or by field', () => {
    expect(parseFields(COMPANY_SELECTABLE, 'contacts.email, lastSeen,name,name')).toEqual({
      fields: ['id', 'name', 'lastSeen'],
      lists: { contacts: ['id', 'email'] },
    });
    expect(parseFields(COMPANY_SELECTABLE, ['contacts.email', 'contacts'])).toEqual({
      fields: ['id'],
      lists: { contacts: ['id', 'name', 'jobTitle', 'email', 'phone', 'linkedin', 'seniority'] },
    });
    expect(parseFields(LEAD_SELECTABLE, 'status')).toEqual({ fields: ['id', 'status'], lists: {} });
  });

  it('refuses each unknown name once, and an empty one', () => {
    const allowed = selectableNames(LEAD_SELECTABLE).join(', ');
    expect(parseFields(LEAD_SELECTABLE, 'a,status,b,a')).toEqual(
      new RefusedValue(
        ...['a', 'b'].map(
          (name) =>
            `fields has an unknown name "${name}": give one or more of ${allowed}, comma-separated`,
        ),
      ),
    );
    const many = parseFields(
      LEAD_SELECTABLE,
      Array.from({ length: 1000 }, (_, i) => `x${i}`),
    );
    expect((many as RefusedValue).messages).toHaveLength(21);
    expect((many as RefusedValue).messages[20]).toBe('fields has 980 more unknown names');
    expect(parseFields(LEAD_SELECTABLE, '')).toBeInstanceOf(RefusedValue);
    expect(parseFields(LEAD_SELECTABLE, ['status', ''])).toBeInstanceOf(RefusedValue);
    expect(parseFields(LEAD_SELECTABLE, [1])).toBeInstanceOf(RefusedValue);
  });

  it('gives the same key to the same selection however written', () => {
    const key = (raw: string) => selectionKey(parseFields(COMPANY_SELECTABLE, raw) as never);
    expect(key('name,contacts.email')).toBe(key('contacts.email,id,name'));
    expect(key('name')).not.toBe(key('name,contacts.id'));
  });
});

describe('BySelection', () => {
  it('makes the whole statements once, and keeps a bounded number of the others', () => {
    let made = 0;
    const statements = new BySelection('test', () => ++made);
    expect(statements.for(undefined)).toBe(1);
    const names = selectableNames(COMPANY_SELECTABLE).slice(1, 18);
    for (const name of names) statements.for(parseFields(COMPANY_SELECTABLE, name) as never);
    for (const name of names) statements.for(parseFields(COMPANY_SELECTABLE, name) as never);
    expect(made).toBe(1 + names.length); // each made once while kept
    // More distinct selections than are kept (the bits of i + 1): the least recently used are
    // made again.
    for (let i = 0; i < 2 * KEPT_STATEMENTS; i++) {
      const picked = names.filter((_, j) => ((i + 1) >> j) & 1);
      statements.for(parseFields(COMPANY_SELECTABLE, picked) as never);
    }
    const before = made;
    statements.for(parseFields(COMPANY_SELECTABLE, names[5]) as never);
    expect(made).toBe(before + 1);
    expect(statements.for(undefined)).toBe(1);
    expect(keptStatementCount()).toBe(KEPT_STATEMENTS);
  });
});
