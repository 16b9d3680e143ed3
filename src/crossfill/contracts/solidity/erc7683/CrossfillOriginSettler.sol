// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {SafeTransfer} from "../lib/SafeTransfer.sol";
import {TypedSignatures} from "../lib/TypedSignatures.sol";
import {
    FillInstruction,
    GaslessCrossChainOrder,
    IOriginSettler,
    OnchainCrossChainOrder,
    Output,
    ResolvedCrossChainOrder
} from "./ERC7683.sol";

/// @notice The Depository's ERC-20 deposit, as the settler calls it.
interface IDepository {
    function depositErc20(address depositor, address token, uint256 amount, bytes32 id) external;
}

/// @notice Crossfill's order data (`orderDataType` is the keccak256 of its EIP-712 type string).
/// An ERC-20 input on this chain for an output (ERC-20, or native as address 0) paid to
/// `recipient` on `destinationChainId` through `destinationSettler`.
struct CrossfillOrderData {
    address inputToken;
    uint256 inputAmount;
    uint256 destinationChainId;
    address destinationSettler;
    address outputToken;
    uint256 outputAmount;
    address recipient;
}

/// @title CrossfillOriginSettler
/// @notice ERC-7683 origin settler. Opening an order pulls the user's input and deposits it
/// into the Depository under the order id (the user as depositor), then emits `Open` with the
/// resolved order. From there the order is a Depository deposit like any other: Crossfill fills
/// it and repays its solver from the deposit, or refunds the deposit to the user, through the
/// Depository's allocator-signed payouts. The settler itself never holds funds between calls.
contract CrossfillOriginSettler is IOriginSettler {
    bytes32 public constant ORDER_DATA_TYPE = keccak256(
        "CrossfillOrderData(address inputToken,uint256 inputAmount,uint256 destinationChainId,"
        "address destinationSettler,address outputToken,uint256 outputAmount,address recipient)"
    );
    bytes32 public constant GASLESS_ORDER_TYPEHASH = keccak256(
        "GaslessCrossChainOrder(address originSettler,address user,uint256 nonce,"
        "uint256 originChainId,uint32 openDeadline,uint32 fillDeadline,bytes32 orderDataType,"
        "bytes orderData)"
    );
    bytes32 private constant NAME_HASH = keccak256("CrossfillOriginSettler");
    bytes32 private constant VERSION_HASH = keccak256("1");
    /// @notice Nonces at or above this are the settler's own, for orders opened on chain.
    uint256 public constant ONCHAIN_NONCES = 1 << 255;

    error WrongOrderDataType(bytes32 orderDataType);
    error WrongSettler(address originSettler);
    error WrongOriginChain(uint256 originChainId);
    error OpenDeadlinePassed(uint32 openDeadline);
    error FillDeadlinePassed(uint32 fillDeadline);
    error InvalidNonce(uint256 nonce);
    error NonceAlreadyUsed(address user, uint256 nonce);
    error InvalidSignature();
    error InvalidOrder();

    address public immutable depository;
    /// @notice Nonces of opened orders, per user: each opens once.
    mapping(address => mapping(uint256 => bool)) public nonceUsed;
    /// @notice How many orders each user opened on chain (their nonce: ONCHAIN_NONCES + count).
    mapping(address => uint256) public openedOnchain;

    constructor(address depository_) {
        depository = depository_;
    }

    function openFor(
        GaslessCrossChainOrder calldata order,
        bytes calldata signature,
        bytes calldata /* originFillerData */
    ) external {
        if (order.originSettler != address(this)) revert WrongSettler(order.originSettler);
        if (order.originChainId != block.chainid) revert WrongOriginChain(order.originChainId);
        if (block.timestamp > order.openDeadline) revert OpenDeadlinePassed(order.openDeadline);
        if (order.nonce >= ONCHAIN_NONCES) revert InvalidNonce(order.nonce);
        address signer = TypedSignatures.recover(
            TypedSignatures.digest(domainSeparator(), hashGaslessOrder(order)), signature
        );
        if (signer == address(0) || signer != order.user) revert InvalidSignature();
        _open(
            order.user,
            order.nonce,
            order.openDeadline,
            order.fillDeadline,
            order.orderDataType,
            order.orderData
        );
    }

    function open(OnchainCrossChainOrder calldata order) external {
        uint256 nonce = ONCHAIN_NONCES + openedOnchain[msg.sender]++;
        _open(
            msg.sender,
            nonce,
            uint32(block.timestamp),
            order.fillDeadline,
            order.orderDataType,
            order.orderData
        );
    }

    function resolveFor(GaslessCrossChainOrder calldata order, bytes calldata /* originFillerData */ )
        external
        view
        returns (ResolvedCrossChainOrder memory)
    {
        return _resolve(
            order.user,
            order.nonce,
            order.openDeadline,
            order.fillDeadline,
            order.orderDataType,
            order.orderData
        );
    }

    /// @notice The order as `open` would open it now for the caller.
    function resolve(OnchainCrossChainOrder calldata order)
        external
        view
        returns (ResolvedCrossChainOrder memory)
    {
        return _resolve(
            msg.sender,
            ONCHAIN_NONCES + openedOnchain[msg.sender],
            uint32(block.timestamp),
            order.fillDeadline,
            order.orderDataType,
            order.orderData
        );
    }

    /// @notice The order's id: its settler, chain, user and nonce (each nonce opens once) and
    /// the terms it was opened on.
    function orderIdOf(
        address user,
        uint256 nonce,
        uint32 openDeadline,
        uint32 fillDeadline,
        bytes32 orderDataType,
        bytes calldata orderData
    ) public view returns (bytes32) {
        return keccak256(
            abi.encode(
                address(this),
                block.chainid,
                user,
                nonce,
                openDeadline,
                fillDeadline,
                orderDataType,
                keccak256(orderData)
            )
        );
    }

    function domainSeparator() public view returns (bytes32) {
        return TypedSignatures.domainSeparator(NAME_HASH, VERSION_HASH);
    }

    /// @notice EIP-712 hashStruct of a gasless order (what the user signs).
    function hashGaslessOrder(GaslessCrossChainOrder calldata order) public pure returns (bytes32) {
        return keccak256(
            abi.encode(
                GASLESS_ORDER_TYPEHASH,
                order.originSettler,
                order.user,
                order.nonce,
                order.originChainId,
                order.openDeadline,
                order.fillDeadline,
                order.orderDataType,
                keccak256(order.orderData)
            )
        );
    }

    function _open(
        address user,
        uint256 nonce,
        uint32 openDeadline,
        uint32 fillDeadline,
        bytes32 orderDataType,
        bytes calldata orderData
    ) private {
        if (nonceUsed[user][nonce]) revert NonceAlreadyUsed(user, nonce);
        nonceUsed[user][nonce] = true;
        ResolvedCrossChainOrder memory resolved =
            _resolve(user, nonce, openDeadline, fillDeadline, orderDataType, orderData);
        CrossfillOrderData memory data = abi.decode(orderData, (CrossfillOrderData));
        SafeTransfer.safeTransferFrom(data.inputToken, user, address(this), data.inputAmount);
        SafeTransfer.safeApprove(data.inputToken, depository, data.inputAmount);
        IDepository(depository).depositErc20(user, data.inputToken, data.inputAmount, resolved.orderId);
        emit Open(resolved.orderId, resolved);
    }

    function _resolve(
        address user,
        uint256 nonce,
        uint32 openDeadline,
        uint32 fillDeadline,
        bytes32 orderDataType,
        bytes calldata orderData
    ) private view returns (ResolvedCrossChainOrder memory resolved) {
        if (orderDataType != ORDER_DATA_TYPE) revert WrongOrderDataType(orderDataType);
        if (block.timestamp > fillDeadline) revert FillDeadlinePassed(fillDeadline);
        CrossfillOrderData memory data = abi.decode(orderData, (CrossfillOrderData));
        if (
            data.inputToken == address(0) || data.inputAmount == 0 || data.outputAmount == 0
                || data.recipient == address(0) || data.destinationSettler == address(0)
        ) revert InvalidOrder();

        resolved.user = user;
        resolved.originChainId = block.chainid;
        resolved.openDeadline = openDeadline;
        resolved.fillDeadline = fillDeadline;
        resolved.orderId = orderIdOf(user, nonce, openDeadline, fillDeadline, orderDataType, orderData);

        resolved.maxSpent = new Output[](1);
        resolved.maxSpent[0] = Output({
            token: _word(data.outputToken),
            amount: data.outputAmount,
            recipient: _word(data.recipient),
            chainId: data.destinationChainId
        });
        // The filler's pay: the input, on this chain, to whoever the operator repays.
        resolved.minReceived = new Output[](1);
        resolved.minReceived[0] = Output({
            token: _word(data.inputToken),
            amount: data.inputAmount,
            recipient: bytes32(0),
            chainId: block.chainid
        });
        resolved.fillInstructions = new FillInstruction[](1);
        resolved.fillInstructions[0] = FillInstruction({
            destinationChainId: data.destinationChainId,
            destinationSettler: _word(data.destinationSettler),
            originData: abi.encode(
                data.outputToken, data.outputAmount, data.recipient, data.destinationChainId, fillDeadline
            )
        });
    }

    function _word(address account) private pure returns (bytes32) {
        return bytes32(uint256(uint160(account)));
    }
}
