"""The durable decision store: SQLAlchemy 2 tables, Alembic migrations, and the queries
commit mode, the database queue source and the reviewers' queue use. No model code."""
