/** Prisma 7 (with @prisma/adapter-pg or @prisma/adapter-better-sqlite3) as the ledger's executor; the route gets its transaction client. */
export {
  prismaExecutor,
  type PrismaExecutorOptions,
  type PrismaLike,
  type PrismaTransactionOf,
  type PrismaTransactionOptions,
} from '../prisma-executor.js';
