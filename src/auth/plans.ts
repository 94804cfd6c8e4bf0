import type { Plan } from '../generated/prisma/enums';

/** The one place that says which plans include API access. */
export function planIncludesApiAccess(plan: Plan): boolean {
  switch (plan) {
    case 'growth':
      return true;
    case 'starter':
      return false;
  }
}
