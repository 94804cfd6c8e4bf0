import { KEPT_STATEMENTS, keptStatementCount, keptStatements } from './kept-statements';

describe('keptStatements', () => {
  it('keeps one bound for every maker: those one makes push out the least recent of another', () => {
    let made = 0;
    const selected = () => keptStatements('resource selected:name', () => ++made);
    selected();
    selected();
    expect(made).toBe(1);
    for (let i = 0; i < KEPT_STATEMENTS; i++) keptStatements(`list items:${i}`, () => i);
    expect(keptStatementCount()).toBe(KEPT_STATEMENTS);
    selected();
    expect(made).toBe(2);
  });
});
