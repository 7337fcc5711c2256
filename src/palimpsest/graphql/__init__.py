"""The GraphQL surface: strawberry types, fields and schema assembly. No business logic."""
