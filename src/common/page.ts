/** The envelope of both lists. */
export interface Page<T> {
  total: number;
  limit: number;
  offset: number;
  data: T[];
}
