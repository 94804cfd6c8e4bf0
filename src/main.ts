import { serve } from './server/serve';

// `npm run start:prod`: the server alone (server/serve.ts); the container's command applies the
// migrations first (server/entrypoint.ts).
void serve();
