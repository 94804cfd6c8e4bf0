import { createServer } from 'node:http';
import { answerBare } from './bare-handler';

// The bare limit (bare-handler.ts) on node:http alone.
const server = createServer(answerBare);
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 3000));
