"""The books' side of a chain where they hold one account there, the solver's own: deposits
are paid into it, and fills and refunds paid from it by the kind's journalled payer (the SVM
chain's vault, the perps exchange's account). A kind adds which currencies it serves, how
their balances are read and whether deposits may be unread (`kinds.books_port.BooksReader`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain import books
from crossfill.kinds.books_port import BooksCurrency, Holding
from crossfill.store.payment_journal import PaymentJournal
from crossfill.types import ChainId


class Identified(Protocol):
    @property
    def id(self) -> ChainId: ...


Config = TypeVar("Config", bound=Identified)
Port = TypeVar("Port")


@dataclass(frozen=True)
class SolverAccountBooks(ABC, Generic[Config, Port]):
    """The chain `config` describes, read through `port`; its payer journals in `journal`."""

    journal: ClassVar[PaymentJournal[Any]]

    config: Config
    port: Port

    @property
    def chain_id(self) -> ChainId:
        return self.config.id

    @property
    @abstractmethod
    def solver(self) -> str:
        """The solver's account there, as the chain writes it."""

    @abstractmethod
    def currencies(self) -> list[BooksCurrency]: ...

    async def holdings(self, session: AsyncSession) -> list[Holding]:
        keys = tuple(currency.key for currency in self.currencies())
        return [Holding(books.key_account(self.solver), self.solver, keys, takes_deposits=True)]

    async def payments_in_flight(self, session: AsyncSession) -> int:
        return await self.journal.in_flight(session, chain_id=self.chain_id)
