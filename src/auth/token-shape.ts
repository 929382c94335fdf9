import { UUID_SHAPE } from '../common/validation/uuid';

/** The bearer token's shape picks the strategy (API.md section 1): a JWT or an API key (a UUID). */
export const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
export const API_KEY_SHAPE = UUID_SHAPE;
